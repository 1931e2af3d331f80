using System.Numerics;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Runtime.Intrinsics;
using System.Runtime.Intrinsics.Arm;
using System.Runtime.Intrinsics.X86;
using System.Text;
using jemalloc.Internal;

namespace jemalloc.Records;

/// <summary>
/// How a <see cref="Utf8StringStore"/> turns text into the UTF-8 bytes it stores: short text in one
/// pass on the caller's stack, longer text counted strictly first (an unpaired surrogate has no UTF-8
/// form and is refused, never replaced).
/// </summary>
internal static class StoredStringEncoding
{
    /// <summary>Text up to this many characters is encoded in one pass on the stack (at most three bytes each).</summary>
    internal const int ShortChars = 256;

    private static readonly UTF8Encoding StrictUtf8 = new(encoderShouldEmitUTF8Identifier: false, throwOnInvalidBytes: true);

    // For each 8-bit mask of the ASCII characters in a block, the 16 byte indices that keep both
    // bytes of a two-byte character and only the first of an ASCII one (see EncodeTwoByteBlocks).
    private static readonly byte[] Compactions = BuildCompactions();

    /// <summary>
    /// Whether <see cref="EncodeShort"/> encodes blocks of characters below U+0800 a vector at a time:
    /// where a byte shuffle with run-time indices is one instruction (SSSE3, Arm64's table lookup).
    /// </summary>
    internal static bool EncodesTwoByteBlocks => Vector128.IsHardwareAccelerated && (Ssse3.IsSupported || AdvSimd.Arm64.IsSupported);

    /// <summary>
    /// UTF-16 to UTF-8, the bytes of each character from the one read that also chose how to encode
    /// it (<paramref name="destination"/>: three bytes per character): a leading run of ASCII narrowed
    /// a vector at a time, then blocks of eight characters below U+0800 a vector at a time, the rest a
    /// character at a time.
    /// </summary>
    /// <returns>The bytes written, or the complement of the index of an unpaired surrogate.</returns>
    /// <exception cref="ArgumentException"><paramref name="destination"/> has fewer than three bytes per character.</exception>
    internal static int EncodeShort(ReadOnlySpan<char> text, Span<byte> destination)
    {
        if (destination.Length < text.Length * 3L)
        {
            ThrowHelper.ThrowArgument(nameof(destination), "The destination needs three bytes per character.");
        }

        ref byte to = ref MemoryMarshal.GetReference(destination);
        ref char from = ref MemoryMarshal.GetReference(text);
        int i = 0;
        int written = 0;
        if (Vector128.IsHardwareAccelerated)
        {
            i = NarrowAsciiPrefix(text, ref to);
            written = i;
        }

        // Not when fewer than a block's characters are left, nor when the next one already rules out
        // the first block (U+0800 or more).
        if (EncodesTwoByteBlocks && i + 8 <= text.Length && Unsafe.Add(ref from, i) < 0x800)
        {
            (i, written) = EncodeTwoByteBlocks(text, i, ref to, written);
        }

        return i == text.Length ? written : EncodeRest(text, i, ref to, written);
    }

    // Encodes text[i..] a character at a time after `written` bytes (the caller's destination has
    // three bytes per character). Kept out of EncodeShort so that text this loop encodes whole (three-
    // byte characters from the start) does not pay for the registers the vector paths hold there.
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static int EncodeRest(ReadOnlySpan<char> text, int i, ref byte to, int written)
    {
        ref char from = ref MemoryMarshal.GetReference(text);
        for (; i < text.Length; i++)
        {
            uint c = Unsafe.Add(ref from, i);
            if (c < 0x80)
            {
                Unsafe.Add(ref to, written++) = (byte)c;
            }
            else if (c < 0x800)
            {
                Unsafe.Add(ref to, written) = (byte)(0xC0 | (c >> 6));
                Unsafe.Add(ref to, written + 1) = (byte)(0x80 | (c & 0x3F));
                written += 2;
            }
            else if (c - 0xD800 >= 0x800)
            {
                Unsafe.Add(ref to, written) = (byte)(0xE0 | (c >> 12));
                Unsafe.Add(ref to, written + 1) = (byte)(0x80 | ((c >> 6) & 0x3F));
                Unsafe.Add(ref to, written + 2) = (byte)(0x80 | (c & 0x3F));
                written += 3;
            }
            else
            {
                // A surrogate: a high one followed by a low one is one code point of four bytes.
                if (c >= 0xDC00 || i + 1 == text.Length)
                {
                    return ~i;
                }

                uint low = Unsafe.Add(ref from, i + 1);
                if (low - 0xDC00 >= 0x400)
                {
                    return ~i;
                }

                uint codePoint = 0x10000 + ((c - 0xD800) << 10) + (low - 0xDC00);
                Unsafe.Add(ref to, written) = (byte)(0xF0 | (codePoint >> 18));
                Unsafe.Add(ref to, written + 1) = (byte)(0x80 | ((codePoint >> 12) & 0x3F));
                Unsafe.Add(ref to, written + 2) = (byte)(0x80 | ((codePoint >> 6) & 0x3F));
                Unsafe.Add(ref to, written + 3) = (byte)(0x80 | (codePoint & 0x3F));
                written += 4;
                i++;
            }
        }

        return written;
    }

    // Narrows the leading ASCII characters 16 (then 8) at a time, stopping before the first block
    // that holds a character of 0x80 or more; returns how many were written (one byte each). The
    // caller's destination has three bytes per character, so a block never writes past it.
    // (System.Text.Ascii.FromUtf16 does this too, but its per-call setup costs more than it saves on
    // strings of a few dozen characters, which is what a store mostly holds.)
    private static int NarrowAsciiPrefix(ReadOnlySpan<char> text, ref byte to)
    {
        ref ushort from = ref Unsafe.As<char, ushort>(ref MemoryMarshal.GetReference(text));
        Vector128<ushort> nonAscii = Vector128.Create((ushort)0xFF80);
        int i = 0;
        for (; i + 16 <= text.Length; i += 16)
        {
            Vector128<ushort> low = Vector128.LoadUnsafe(ref from, (nuint)i);
            Vector128<ushort> high = Vector128.LoadUnsafe(ref from, (nuint)(i + 8));
            if (((low | high) & nonAscii) != Vector128<ushort>.Zero)
            {
                return i;
            }

            Vector128.Narrow(low, high).StoreUnsafe(ref to, (nuint)i);
        }

        if (i + 8 <= text.Length)
        {
            Vector128<ushort> last = Vector128.LoadUnsafe(ref from, (nuint)i);
            if ((last & nonAscii) == Vector128<ushort>.Zero)
            {
                Unsafe.WriteUnaligned(ref Unsafe.Add(ref to, i), Vector128.Narrow(last, last).AsUInt64().ToScalar());
                i += 8;
            }
        }

        return i;
    }

    // Encodes blocks of eight characters that are all below U+0800 from text[i], stopping before
    // the first block with a character of U+0800 or more (three-byte characters and surrogates are
    // left to the scalar loop, which finds unpaired surrogates) and before a last block of fewer than
    // eight. Not as the last eight characters, overlapping the block before: that would read some
    // characters twice, and the store keeps these bytes unchecked because each character's bytes
    // come from one read (a character another thread changed between two reads would leave bytes
    // that are not UTF-8).
    // The 16-byte stores cannot pass the destination's end (three bytes per character): a block's
    // store starts after the bytes of the characters before it, at most three each, so a block
    // starting at character k stores below 3 * k + 16 < 3 * (k + 8) <= 3 * text.Length.
    private static (int Read, int Written) EncodeTwoByteBlocks(ReadOnlySpan<char> text, int i, ref byte to, int written)
    {
        ref ushort from = ref Unsafe.As<char, ushort>(ref MemoryMarshal.GetReference(text));
        ref byte compactions = ref MemoryMarshal.GetArrayDataReference(Compactions);
        for (; i + 8 <= text.Length; i += 8)
        {
            Vector128<ushort> c = Vector128.LoadUnsafe(ref from, (nuint)i);
            if (!AllBelow800(c))
            {
                return (i, written);
            }

            EncodeBlock(c, ref compactions, out uint asciiMask).StoreUnsafe(ref to, (nuint)written);
            written += 16 - BitOperations.PopCount(asciiMask);
        }

        return (i, written);
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static bool AllBelow800(Vector128<ushort> c) => (c & Vector128.Create((ushort)0xF800)) == Vector128<ushort>.Zero;

    // The UTF-8 of eight characters below U+0800, in the first 16 - PopCount(asciiMask) bytes
    // (compactions: Compactions' first byte).
    // Each character becomes two bytes in its own 16-bit lane and a shuffle drops the unused second
    // byte of each ASCII lane, so a block takes no branch on which kind each character is (with the
    // two kinds mixed, such branches are the ones the processor mispredicts).
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static Vector128<byte> EncodeBlock(Vector128<ushort> c, ref byte compactions, out uint asciiMask)
    {
        // Lead byte 110xxxxx in the low half of the lane (first in memory), 10xxxxxx in the high.
        Vector128<ushort> twoBytes = (c >> 6) | Vector128.Create((ushort)0x80C0) | ((c & Vector128.Create((ushort)0x3F)) << 8);
        Vector128<ushort> ascii = Vector128.Equals(c & Vector128.Create((ushort)0xFF80), Vector128<ushort>.Zero);
        Vector128<byte> lanes = Vector128.ConditionalSelect(ascii, c, twoBytes).AsByte();

        // asciiMask < 256, so its 16 indices lie inside Compactions.
        asciiMask = ascii.ExtractMostSignificantBits();
        Vector128<byte> indices = Vector128.LoadUnsafe(ref compactions, asciiMask * 16);
        return Compact(lanes, indices);
    }

    // A byte shuffle with indices known only at run time: one instruction on both platforms (an index
    // of 0x80 or more gives zero on both). EncodesTwoByteBlocks says that one of them is supported.
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static Vector128<byte> Compact(Vector128<byte> bytes, Vector128<byte> indices) =>
        Ssse3.IsSupported ? Ssse3.Shuffle(bytes, indices) : AdvSimd.Arm64.VectorTableLookup(bytes, indices);

    private static byte[] BuildCompactions()
    {
        var table = new byte[256 * 16];
        for (int mask = 0; mask < 256; mask++)
        {
            Span<byte> indices = table.AsSpan(mask * 16, 16);
            indices.Fill(0x80);
            int at = 0;
            for (int lane = 0; lane < 8; lane++)
            {
                indices[at++] = (byte)(2 * lane);
                if ((mask & (1 << lane)) == 0)
                {
                    indices[at++] = (byte)((2 * lane) + 1);
                }
            }
        }

        return table;
    }

    /// <summary>The UTF-8 length of <paramref name="value"/>, which must fit a block of its own.</summary>
    /// <exception cref="ArgumentException"><paramref name="value"/> has an unpaired surrogate, or encodes to more than <see cref="Utf8StringStore.MaxBlockSize"/> bytes.</exception>
    internal static int ByteCount(ReadOnlySpan<char> value)
    {
        long count;
        try
        {
            count = StrictUtf8.GetByteCount(value);
        }
        catch (EncoderFallbackException e)
        {
            throw new ArgumentException($"The string has an unpaired surrogate at index {e.Index}: it cannot be encoded as UTF-8.", nameof(value), e);
        }
        catch (ArgumentOutOfRangeException e)
        {
            throw new ArgumentException($"A stored string is at most {Utf8StringStore.MaxBlockSize} bytes.", nameof(value), e);
        }

        if (count > Utf8StringStore.MaxBlockSize)
        {
            ThrowHelper.ThrowArgument(nameof(value), $"A stored string is at most {Utf8StringStore.MaxBlockSize} bytes; this one is {count}.");
        }

        return (int)count;
    }
}
