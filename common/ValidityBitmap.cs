using System.Numerics;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace jemalloc.AddOns;

/// <summary>
/// Arrow's validity bitmap layout (bit <c>i % 8</c> of byte <c>i / 8</c> is set when row <c>i</c>
/// has a value), for native bitmaps. One source for the add-ons: each compiles this file in (linked
/// from common/), so neither depends on the other and the core package has no bitmap API to keep.
/// </summary>
internal static unsafe class ValidityBitmap
{
    /// <summary>The bytes a bitmap of <paramref name="rows"/> rows takes.</summary>
    internal static long BytesFor(long rows) => (rows + 7) >> 3;

    /// <summary>Whether row <paramref name="row"/> has a value.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static bool IsSet(byte* bits, long row) => ((bits[row >> 3] >> (int)(row & 7)) & 1) != 0;

    /// <summary>Whether row <paramref name="row"/> has a value, in a managed view of a bitmap.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static bool IsSet(ReadOnlySpan<byte> bits, int row) => ((bits[row >> 3] >> (row & 7)) & 1) != 0;

    /// <summary>Marks row <paramref name="row"/> as having a value.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static void Set(byte* bits, long row) => bits[row >> 3] |= (byte)(1 << (int)(row & 7));

    /// <summary>Marks rows <paramref name="start"/> to <paramref name="start"/> + <paramref name="count"/> - 1 as having a value, whole bytes at a time.</summary>
    internal static void SetRange(byte* bits, long start, long count)
    {
        long end = start + count;
        for (; start < end && (start & 7) != 0; start++)
        {
            Set(bits, start);
        }

        long wholeBytes = (end - start) >> 3;
        NativeMemory.Fill(bits + (start >> 3), (nuint)wholeBytes, 0xFF);
        for (start += wholeBytes << 3; start < end; start++)
        {
            Set(bits, start);
        }
    }

    /// <summary>How many of the first <paramref name="rows"/> rows have a value, a word at a time; the bits past the last row are ignored.</summary>
    internal static long CountSet(byte* bits, long rows)
    {
        long fullBytes = rows >> 3;
        long count = 0;
        long i = 0;
        for (; i + sizeof(ulong) <= fullBytes; i += sizeof(ulong))
        {
            count += BitOperations.PopCount(Unsafe.ReadUnaligned<ulong>(bits + i));
        }

        for (; i < fullBytes; i++)
        {
            count += BitOperations.PopCount(bits[i]);
        }

        int tail = (int)(rows & 7);
        if (tail != 0)
        {
            count += BitOperations.PopCount((uint)(bits[fullBytes] & ((1 << tail) - 1)));
        }

        return count;
    }
}
