using System.Runtime.CompilerServices;

namespace jemalloc.Records;

/// <summary>
/// How a <see cref="Utf8StringStore"/> block holds its strings, laid out so that a
/// <see cref="StoredUtf8String"/> can prove on every read that its offset and length name one whole
/// string of its block, even when the value is a racy copy mixing the words of two values:
/// <list type="bullet">
/// <item>bytes 0-3: how many bytes of the block are written (records below it are complete and never change but for their marker);</item>
/// <item>then records, back to back: a marker byte (<see cref="Live"/> or <see cref="Abandoned"/>),
/// the length in 1-5 bytes, the UTF-8 bytes.</item>
/// </list>
/// The markers are bytes that valid UTF-8 never holds and the length bytes never take, so in the
/// written part a marker is found only where a record starts. The length is written high group first:
/// seven bits per byte below 0x80, then the last byte 0x80 | the low six bits, so the length bytes
/// of two different lengths never read as each other from the same marker (see <see cref="Find"/>).
/// </summary>
internal static unsafe class StoredStringLayout
{
    /// <summary>Where the first record starts: after the written-bytes count.</summary>
    internal const int FirstRecord = sizeof(int);

    /// <summary>The marker of a string still current.</summary>
    internal const byte Live = 0xFF;

    /// <summary>The marker of a string <see cref="Utf8StringStore.Replace"/> superseded.</summary>
    internal const byte Abandoned = 0xFE;

    /// <summary>The bytes before a string of <paramref name="length"/> bytes: the marker and the length.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static int HeaderBytes(int length) => 1 + LengthBytes(length);

    /// <summary>How many bytes a block written up to its first record holds: the written-bytes count alone.</summary>
    internal static void Initialize(byte* block) => Volatile.Write(ref *(int*)block, FirstRecord);

    /// <summary>How many bytes of the block are written (records included).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static int Written(byte* block) => Volatile.Read(ref *(int*)block);

    /// <summary>Publishes the records written below <paramref name="written"/>: readers check values against it.</summary>
    internal static void Publish(byte* block, int written) => Volatile.Write(ref *(int*)block, written);

    /// <summary>Writes the marker and the length before <paramref name="data"/>.</summary>
    internal static void WriteHeader(byte* data, int length)
    {
        data[-1] = (byte)(0x80 | (length & 0x3F));
        uint rest = (uint)length >> 6;
        int i = 2;
        while (rest != 0)
        {
            data[-i] = (byte)(rest & 0x7F);
            rest >>= 7;
            i++;
        }

        data[-i] = Live;
    }

    /// <summary>
    /// The marker of the record whose UTF-8 bytes are exactly [<paramref name="offset"/>,
    /// <paramref name="offset"/> + <paramref name="length"/>) of the block, or null if no record is.
    /// </summary>
    /// <remarks>
    /// The range is inside the written part, whose only bytes of 0xFE or 0xFF are markers, so the
    /// marker found is a record's. Its length bytes are 0x00-0x7F but for the last, 0x80-0xBF; the
    /// check wants the same shape for <paramref name="length"/>, so a shorter or longer length would
    /// need a last byte where the record has another one: the record's length and offset are these.
    /// </remarks>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static byte* Find(byte* block, uint blockLength, int offset, int length)
    {
        ulong end = (ulong)(uint)offset + (uint)length;
        uint written = (uint)Written(block);
        int lengthBytes = LengthBytes(length);
        if (end > written || written > blockLength || (uint)offset < FirstRecord + 1 + (uint)lengthBytes)
        {
            return null;
        }

        byte* data = block + offset;
        if (data[-1] != (byte)(0x80 | (length & 0x3F)))
        {
            return null;
        }

        uint rest = (uint)length >> 6;
        for (int i = 2; i <= lengthBytes; i++)
        {
            if (data[-i] != (byte)(rest & 0x7F))
            {
                return null;
            }

            rest >>= 7;
        }

        byte* marker = data - lengthBytes - 1;
        return *marker >= Abandoned ? marker : null;
    }

    // Six bits in the last byte, seven in each before it; a negative length (only in a torn or
    // forged value) takes five, and the range check refuses it.
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static int LengthBytes(int length) =>
        (uint)length < 1 << 6 ? 1 : (uint)length < 1 << 13 ? 2 : (uint)length < 1 << 20 ? 3 : (uint)length < 1 << 27 ? 4 : 5;
}
