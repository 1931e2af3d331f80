using System.Numerics;
using System.Runtime.CompilerServices;
using jemalloc.Internal;

namespace jemalloc.Columns;

/// <summary>The checks every column type makes of the arrays it is built on, in one place.</summary>
internal static unsafe class ColumnChecks
{
    /// <summary>The bytes a validity bitmap of <paramref name="rows"/> rows takes.</summary>
    internal static long BitmapBytes(long rows) => (rows + 7) >> 3;

    /// <summary>
    /// Checks that <paramref name="offsets"/> describe <paramref name="length"/> values inside
    /// <paramref name="data"/> and that <paramref name="validity"/> has a bit per row; returns the bytes the
    /// values take and the rows the bitmap marks null. One pass over the offsets and the bitmap.
    /// </summary>
    /// <exception cref="ArgumentException">They do not.</exception>
    /// <exception cref="ObjectDisposedException">An array was disposed.</exception>
    internal static (long ByteCount, long NullCount) CheckStringLayout(HugeArray<long> offsets, HugeArray<byte> data, HugeArray<byte>? validity, long length)
    {
        if (ReferenceEquals(offsets, data) || ReferenceEquals(offsets, validity))
        {
            ThrowHelper.ThrowArgument(nameof(offsets), "The offsets must be an array of their own.");
        }

        using MemoryLease<long> offsetLease = offsets.Lease();
        using MemoryLease<byte> dataLease = data.Lease();
        long* at = (long*)offsetLease.Pointer;
        long dataLength = dataLease.Length;
        long previous = at[0];
        if ((ulong)previous > (ulong)dataLength)
        {
            ThrowHelper.ThrowArgument(nameof(offsets), $"The first offset is {previous:N0}, outside the data block of {dataLength:N0} bytes.");
        }

        for (long row = 0; row < length; row++)
        {
            long next = at[row + 1];
            if (next < previous || next - previous > int.MaxValue || next > dataLength)
            {
                ThrowBadOffsets(row, previous, next, dataLength);
            }

            previous = next;
        }

        long nullCount = 0;
        if (validity is not null)
        {
            using MemoryLease<byte> bits = validity.Lease();
            if (bits.Length < BitmapBytes(length))
            {
                ThrowHelper.ThrowArgument(nameof(validity), $"A validity bitmap for {length:N0} rows needs {BitmapBytes(length):N0} bytes; this one has {bits.Length:N0}.");
            }

            nullCount = length - CountSet((byte*)bits.Pointer, length);
        }

        return (previous - at[0], nullCount);
    }

    /// <summary>Throws unless <paramref name="array"/> may be freed now: no lease, hold or acquisition of it is open.</summary>
    /// <exception cref="InvalidOperationException">One is.</exception>
    internal static void ThrowIfInUse<T>(HugeArray<T> array, string columnType, string what)
        where T : unmanaged, IEquatable<T>
    {
        int acquired = array.AcquireCount;
        int leased = array.Handle.LeaseCount;
        if (acquired > 0 || leased > 0)
        {
            ThrowHelper.ThrowInvalidOperation($"The {columnType}'s {what} cannot be freed: it is acquired {acquired} and leased or held {leased} time(s) (a read scope, an Arrow view or export, or a write of it is open). Nothing was freed.");
        }
    }

    /// <summary>How many of the first <paramref name="rows"/> bits are set, a word at a time; bits past the last row are ignored.</summary>
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

    /// <summary>
    /// The first of <paramref name="count"/> indices that is not below <paramref name="limit"/> (negative ones
    /// included: they compare as large unsigned numbers), or -1: a vector of indices at a time, so that a
    /// whole-column loop can check its indices once and then use them unchecked.
    /// </summary>
    internal static long FirstIndexNotBelow(int* indices, long count, uint limit)
    {
        var bound = new Vector<uint>(limit);
        long i = 0;
        for (; i + Vector<uint>.Count <= count; i += Vector<uint>.Count)
        {
            if (Vector.GreaterThanOrEqualAny(Unsafe.ReadUnaligned<Vector<uint>>(indices + i), bound))
            {
                break;
            }
        }

        for (; i < count; i++)
        {
            if ((uint)indices[i] >= limit)
            {
                return i;
            }
        }

        return -1;
    }

    /// <summary>A row whose offsets do not describe a value inside the data block, named with what was wrong.</summary>
    internal static string DescribeBadOffsets(long row, long start, long end, long dataLength) =>
        end < start ? $"Row {row:N0}'s value ends at offset {end:N0}, before it starts ({start:N0}): the offsets must not decrease."
        : end - start > int.MaxValue ? $"Row {row:N0}'s value is {end - start:N0} bytes, more than one value may hold ({int.MaxValue:N0})."
        : $"Row {row:N0}'s value is bytes {start:N0} to {end:N0}, past the end of the data block ({dataLength:N0} bytes).";

    private static void ThrowBadOffsets(long row, long start, long end, long dataLength) =>
        ThrowHelper.ThrowArgument("offsets", DescribeBadOffsets(row, start, end, dataLength));
}
