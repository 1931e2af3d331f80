using System.Numerics;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Runtime.Intrinsics;
using jemalloc.Internal;
using jemalloc.Ledger;

namespace jemalloc;

/// <summary>
/// Column-style scans: filters over one column of a record table kept as its own array (for
/// example a <see cref="HugeArray{T}"/> of <see cref="double"/>), compared several elements per
/// instruction with the hardware's vectors.
/// </summary>
public static unsafe class ColumnScan
{
    /// <summary>
    /// Writes to <paramref name="matches"/> the positions <c>i</c>, in ascending order, where
    /// <c><paramref name="min"/> &lt;= column[i] &lt;= <paramref name="max"/></c> (NaN elements never match).
    /// </summary>
    /// <returns>How many positions were written.</returns>
    /// <exception cref="ArgumentException">A bound is NaN, or <paramref name="matches"/> is shorter than <paramref name="column"/>.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="min"/> is greater than <paramref name="max"/>.</exception>
    public static int FindInRange(ReadOnlySpan<double> column, double min, double max, Span<int> matches)
    {
        CheckBounds(min, max);
        if (matches.Length < column.Length)
        {
            ThrowHelper.ThrowArgument(nameof(matches), $"The matches span ({matches.Length}) must be at least as long as the column range ({column.Length}): every element may match.");
        }

        return Find(ref MemoryMarshal.GetReference(column), column.Length, min, max, ref MemoryMarshal.GetReference(matches));
    }

    /// <summary>
    /// Like <see cref="FindInRange(ReadOnlySpan{double}, double, double, Span{int})"/> over
    /// <paramref name="count"/> elements of <paramref name="column"/> from <paramref name="start"/>,
    /// with positions relative to <paramref name="start"/>. The column is leased while it is read, so
    /// a concurrent dispose throws instead of freeing it.
    /// </summary>
    /// <returns>How many positions were written.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="column"/> is null.</exception>
    /// <exception cref="ArgumentOutOfRangeException">The range is outside the column, or <paramref name="min"/> is greater than <paramref name="max"/>.</exception>
    /// <exception cref="ArgumentException">A bound is NaN, or <paramref name="matches"/> is shorter than <paramref name="count"/>.</exception>
    /// <exception cref="ObjectDisposedException">The column was disposed.</exception>
    public static int FindInRange(HugeArray<double> column, long start, int count, double min, double max, Span<int> matches)
    {
        ArgumentNullException.ThrowIfNull(column);
        CheckBounds(min, max);
        RangeGuard.CheckRange(start, count, column.Length, nameof(start), nameof(count), "column");

        if (matches.Length < count)
        {
            ThrowHelper.ThrowArgument(nameof(matches), $"The matches span ({matches.Length}) must be at least as long as the column range ({count}): every element may match.");
        }

        using LedgerBlock.LeaseScope lease = column.Block.Lease(nameof(HugeArray<double>));
        double* first = (double*)column.Pointer + start;
        return Find(ref *first, count, min, max, ref MemoryMarshal.GetReference(matches));
    }

    /// <summary>How many elements of <paramref name="column"/> lie in [<paramref name="min"/>, <paramref name="max"/>] (NaN never does).</summary>
    /// <exception cref="ArgumentException">A bound is NaN.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="min"/> is greater than <paramref name="max"/>.</exception>
    public static int CountInRange(ReadOnlySpan<double> column, double min, double max)
    {
        CheckBounds(min, max);
        int i = 0;
        int count = 0;
        ref double start = ref MemoryMarshal.GetReference(column);
        if (Vector256.IsHardwareAccelerated)
        {
            Vector256<double> low = Vector256.Create(min);
            Vector256<double> high = Vector256.Create(max);
            for (; i <= column.Length - Vector256<double>.Count; i += Vector256<double>.Count)
            {
                Vector256<double> values = Vector256.LoadUnsafe(ref start, (nuint)i);
                uint bits = (Vector256.GreaterThanOrEqual(values, low) & Vector256.LessThanOrEqual(values, high)).ExtractMostSignificantBits();
                count += BitOperations.PopCount(bits);
            }
        }

        for (; i < column.Length; i++)
        {
            double value = Unsafe.Add(ref start, i);
            count += value >= min && value <= max ? 1 : 0;
        }

        return count;
    }

    /// <summary>
    /// Keeps, of the positions <paramref name="positions"/> into <paramref name="column"/>, those whose
    /// string starts with the UTF-8 bytes <paramref name="prefix"/>: they are moved, in their order, to
    /// the front of <paramref name="positions"/>, and their number returned. The second filter of a
    /// scan whose first (<see cref="FindInRange(ReadOnlySpan{double}, double, double, Span{int})"/>)
    /// left candidates: the strings of the candidates some way ahead are fetched from memory while
    /// the current ones are compared, so their cache misses overlap instead of following one another.
    /// </summary>
    /// <remarks>
    /// Every value is checked as <see cref="StoredUtf8String.StartsWith(ReadOnlySpan{byte})"/> checks
    /// it (its block live in the ledger, its offset and length one whole string of the block). Each
    /// position is read once where it is used and checked there, so another thread that changes
    /// <paramref name="positions"/> meanwhile can only make the call throw, never read outside
    /// <paramref name="column"/>. To read the strings without racing a reset or dispose of their
    /// store, hold its <see cref="Utf8StringStore.EnterRead"/> scope around the call.
    /// </remarks>
    /// <returns>How many positions were kept (the first ones of <paramref name="positions"/>).</returns>
    /// <exception cref="ArgumentOutOfRangeException">A position is negative or not less than the column's length (positions before it may have been moved).</exception>
    /// <exception cref="ObjectDisposedException">A string's store was reset or disposed.</exception>
    /// <exception cref="InvalidOperationException">A value is a mix of two values (a racy copy): see <see cref="StoredUtf8String"/>.</exception>
    public static int KeepStartingWith(ReadOnlySpan<StoredUtf8String> column, Span<int> positions, ReadOnlySpan<byte> prefix)
    {
        // Two stages ahead: the column entries of the candidates 2 * Ahead on, then the strings of
        // those Ahead on (whose entries the first stage fetched).
        const int Ahead = 8;
        ref StoredUtf8String values = ref MemoryMarshal.GetReference(column);
        uint length = (uint)column.Length;
        int count = positions.Length;
        int kept = 0;
        for (int m = 0; m < count; m++)
        {
            if (m + (2 * Ahead) < count && (uint)positions[m + (2 * Ahead)] < length)
            {
                CachePrefetch.Line(Unsafe.AsPointer(ref Unsafe.Add(ref values, positions[m + (2 * Ahead)])));
            }

            if (m + Ahead < count)
            {
                int next = positions[m + Ahead];
                if ((uint)next < length)
                {
                    Unsafe.Add(ref values, next).Prefetch(prefix.Length);
                }
            }

            int position = positions[m];
            if ((uint)position >= length)
            {
                ThrowHelper.ThrowArgumentOutOfRange(nameof(positions), position, $"A position must be from 0 to less than the column's length ({length}).");
            }

            if (Unsafe.Add(ref values, position).Bytes.StartsWith(prefix))
            {
                positions[kept++] = position;
            }
        }

        return kept;
    }

    private static void CheckBounds(double min, double max)
    {
        if (double.IsNaN(min) || double.IsNaN(max))
        {
            ThrowHelper.ThrowArgument(double.IsNaN(min) ? nameof(min) : nameof(max), "A range bound cannot be NaN.");
        }

        if (min > max)
        {
            ThrowHelper.ThrowArgumentOutOfRange(nameof(min), min, $"The lower bound must not exceed the upper bound ({max}).");
        }
    }

    private static int Find(ref double start, int length, double min, double max, ref int matches)
    {
        int i = 0;
        int found = 0;
        if (Vector256.IsHardwareAccelerated)
        {
            Vector256<double> low = Vector256.Create(min);
            Vector256<double> high = Vector256.Create(max);
            for (; i <= length - Vector256<double>.Count; i += Vector256<double>.Count)
            {
                Vector256<double> values = Vector256.LoadUnsafe(ref start, (nuint)i);
                uint bits = (Vector256.GreaterThanOrEqual(values, low) & Vector256.LessThanOrEqual(values, high)).ExtractMostSignificantBits();
                // Most blocks of a selective filter match nothing: one test skips them.
                while (bits != 0)
                {
                    Unsafe.Add(ref matches, found++) = i + BitOperations.TrailingZeroCount(bits);
                    bits &= bits - 1;
                }
            }
        }

        for (; i < length; i++)
        {
            double value = Unsafe.Add(ref start, i);
            if (value >= min && value <= max)
            {
                Unsafe.Add(ref matches, found++) = i;
            }
        }

        return found;
    }
}
