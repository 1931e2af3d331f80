using System.Buffers;
using System.Numerics;
using jemalloc.Columns;
using jemalloc.Internal;

namespace jemalloc;

// The whole-column searches: the predicate is tested once per dictionary value, into a table of flags,
// and then the rows' indices are mapped through the table. The indices are public, so they are checked
// a run at a time (a vector compare per 8 indices) before the run is mapped without a check per row.
public sealed partial class NativeDictionaryColumn
{
    // Rows checked and mapped at a time: a multiple of 8, so that a run fills whole bytes of a bitmap.
    private const int Run = 4096;

    /// <summary>The first row that holds exactly <paramref name="value"/>, or -1.</summary>
    /// <param name="value">The bytes to find (UTF-8 for text).</param>
    /// <exception cref="InvalidDataException">A row's index is not one of the dictionary's.</exception>
    /// <exception cref="ObjectDisposedException">The column was disposed.</exception>
    public long IndexOf(ReadOnlySpan<byte> value) => IndexOf(value, 0);

    /// <summary>The first row that holds <paramref name="value"/> (compared as UTF-8 bytes), or -1.</summary>
    /// <param name="value">The string to find.</param>
    /// <exception cref="ArgumentNullException"><paramref name="value"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException"><paramref name="value"/> holds a lone surrogate (it has no UTF-8 form, so no row can hold it).</exception>
    /// <exception cref="InvalidDataException">A row's index is not one of the dictionary's.</exception>
    /// <exception cref="ObjectDisposedException">The column was disposed.</exception>
    public long IndexOf(string value) => IndexOf(value, 0);

    /// <summary>The first row at or after <paramref name="startRow"/> that holds <paramref name="value"/> (compared as UTF-8 bytes), or -1.</summary>
    /// <param name="value">The string to find.</param>
    /// <param name="startRow">The row to start at.</param>
    /// <exception cref="ArgumentNullException"><paramref name="value"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException"><paramref name="value"/> holds a lone surrogate (it has no UTF-8 form, so no row can hold it).</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="startRow"/> is negative or greater than <see cref="Length"/>.</exception>
    /// <exception cref="InvalidDataException">A row's index is not one of the dictionary's.</exception>
    /// <exception cref="ObjectDisposedException">The column was disposed.</exception>
    public long IndexOf(string value, long startRow)
    {
        ArgumentNullException.ThrowIfNull(value);
        using Utf8Text text = new(value);
        return IndexOf(text.Bytes, startRow);
    }

    /// <summary>The first row at or after <paramref name="startRow"/> that holds exactly <paramref name="value"/>, or -1.</summary>
    /// <param name="value">The bytes to find (UTF-8 for text).</param>
    /// <param name="startRow">The row to start at.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="startRow"/> is negative or greater than <see cref="Length"/>.</exception>
    /// <exception cref="InvalidDataException">A row's index is not one of the dictionary's.</exception>
    /// <exception cref="ObjectDisposedException">The column was disposed.</exception>
    public unsafe long IndexOf(ReadOnlySpan<byte> value, long startRow)
    {
        if ((ulong)startRow > (ulong)Length)
        {
            ThrowHelper.ThrowArgumentOutOfRange(nameof(startRow), startRow, $"The column has {Length:N0} rows.");
        }

        using NativeDictionaryColumnReadScope values = OpenRead();
        values.ThrowIfClosed();
        using var matches = new EntryMatches(values, value, prefix: false);
        int* indices = values.IndexPointer;
        byte* bits = values.ValidityPointer;
        for (long start = startRow; start < Length; start += Run)
        {
            int count = (int)Math.Min(Run, Length - start);
            CheckRun(indices, bits, start, count, values.DictionaryLength);
            if (matches.Count == 0)
            {
                continue;
            }

            if (matches.Count == 1)
            {
                // One dictionary value matches: a vectorized search for its index, skipping null rows.
                var run = new ReadOnlySpan<int>(indices + start, count);
                int from = 0;
                while (from < count)
                {
                    int found = run[from..].IndexOf(matches.Single);
                    if (found < 0)
                    {
                        break;
                    }

                    long row = start + from + found;
                    if (!IsNullAt(bits, row))
                    {
                        return row;
                    }

                    from += found + 1;
                }

                continue;
            }

            for (long row = start; row < start + count; row++)
            {
                if (matches.Matches(indices[row]) && !IsNullAt(bits, row))
                {
                    return row;
                }
            }
        }

        return -1;
    }

    /// <summary>How many rows start with <paramref name="prefix"/> (null rows do not).</summary>
    /// <param name="prefix">The bytes to match (UTF-8 for text).</param>
    /// <exception cref="InvalidDataException">A row's index is not one of the dictionary's.</exception>
    /// <exception cref="ObjectDisposedException">The column was disposed.</exception>
    public unsafe long CountStartsWith(ReadOnlySpan<byte> prefix)
    {
        using NativeDictionaryColumnReadScope values = OpenRead();
        values.ThrowIfClosed();
        using var matches = new EntryMatches(values, prefix, prefix: true);
        int* indices = values.IndexPointer;
        byte* bits = values.ValidityPointer;
        long total = 0;
        for (long start = 0; start < Length; start += Run)
        {
            int count = (int)Math.Min(Run, Length - start);
            CheckRun(indices, bits, start, count, values.DictionaryLength);
            if (matches.Count == 0)
            {
                continue;
            }

            for (long row = start; row < start + count; row++)
            {
                if (matches.Matches(indices[row]) && !IsNullAt(bits, row))
                {
                    total++;
                }
            }
        }

        return total;
    }

    /// <summary>
    /// Marks in <paramref name="selection"/> (a bitmap in Arrow's layout: bit <c>i % 8</c> of byte <c>i / 8</c>
    /// for row <c>i</c>) the rows that start with <paramref name="prefix"/>, clearing the others, and returns
    /// how many were marked. Null rows are not marked.
    /// </summary>
    /// <param name="prefix">The bytes to match (UTF-8 for text).</param>
    /// <param name="selection">At least <c>(Length + 7) / 8</c> bytes; the bytes past them are left as they are.</param>
    /// <exception cref="ArgumentNullException"><paramref name="selection"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException"><paramref name="selection"/> is too short, or is one of the column's own arrays.</exception>
    /// <exception cref="InvalidDataException">A row's index is not one of the dictionary's.</exception>
    /// <exception cref="ObjectDisposedException">The column or <paramref name="selection"/> was disposed.</exception>
    public unsafe long SelectStartsWith(ReadOnlySpan<byte> prefix, HugeArray<byte> selection)
    {
        ArgumentNullException.ThrowIfNull(selection);
        if (ReferenceEquals(selection, Validity) || ReferenceEquals(selection, Dictionary.Data) || ReferenceEquals(selection, Dictionary.Validity))
        {
            ThrowHelper.ThrowArgument(nameof(selection), "The selection must be an array of its own, not one of the column's.");
        }

        using NativeDictionaryColumnReadScope values = OpenRead();
        using MemoryLease<byte> selectionLease = selection.Lease();
        if (selectionLease.Length < ColumnChecks.BitmapBytes(Length))
        {
            ThrowHelper.ThrowArgument(nameof(selection), $"A bitmap for {Length:N0} rows needs {ColumnChecks.BitmapBytes(Length):N0} bytes; this one has {selectionLease.Length:N0}.");
        }

        values.ThrowIfClosed();
        using var matches = new EntryMatches(values, prefix, prefix: true);
        int* indices = values.IndexPointer;
        byte* bits = values.ValidityPointer;
        byte* selected = (byte*)selectionLease.Pointer;
        long total = 0;
        for (long start = 0; start < Length; start += Run)
        {
            int count = (int)Math.Min(Run, Length - start);
            CheckRun(indices, bits, start, count, values.DictionaryLength);
            for (int first = 0; first < count; first += 8)
            {
                int inByte = Math.Min(8, count - first);
                int mask = 0;
                for (int bit = 0; bit < inByte; bit++)
                {
                    mask |= matches.Flag(indices[start + first + bit]) << bit;
                }

                if (bits != null)
                {
                    mask &= bits[(start + first) >> 3];
                }

                // The last byte's bits past the column's rows are cleared too: nothing past it is a row.
                mask &= (1 << inByte) - 1;
                selected[(start + first) >> 3] = (byte)mask;
                total += BitOperations.PopCount((uint)mask);
            }
        }

        return total;
    }

    private static unsafe bool IsNullAt(byte* bits, long row) => bits != null && ((bits[row >> 3] >> (int)(row & 7)) & 1) == 0;

    // Throws for the first row of the run that is not null and whose index names no dictionary value;
    // indices out of range that remain are null rows', which the mapping reads as matching nothing.
    private static unsafe void CheckRun(int* indices, byte* bits, long start, int count, int dictionaryLength)
    {
        long bad = ColumnChecks.FirstIndexNotBelow(indices + start, count, (uint)dictionaryLength);
        if (bad < 0)
        {
            return;
        }

        for (long row = start + bad; row < start + count; row++)
        {
            if ((uint)indices[row] >= (uint)dictionaryLength && !IsNullAt(bits, row))
            {
                NativeDictionaryColumnReadScope.ThrowBadIndex(row, indices[row], (uint)dictionaryLength);
            }
        }
    }

    /// <summary>Which dictionary values match, tested once each: a flag per value, in a rented array.</summary>
    private readonly ref struct EntryMatches
    {
        private readonly byte[] _flags;
        private readonly uint _length;

        internal EntryMatches(NativeDictionaryColumnReadScope values, ReadOnlySpan<byte> pattern, bool prefix)
        {
            _length = (uint)values.DictionaryLength;
            _flags = ArrayPool<byte>.Shared.Rent(Math.Max(1, values.DictionaryLength));
            int count = 0;
            int single = -1;
            for (int i = 0; i < values.DictionaryLength; i++)
            {
                ReadOnlySpan<byte> entry = values.GetDictionaryValue(i);
                bool match = prefix ? entry.StartsWith(pattern) : entry.SequenceEqual(pattern);
                _flags[i] = match ? (byte)1 : (byte)0;
                if (match)
                {
                    count++;
                    single = i;
                }
            }

            Count = count;
            Single = single;
        }

        /// <summary>How many dictionary values match.</summary>
        internal int Count { get; }

        /// <summary>The matching value's index when <see cref="Count"/> is 1.</summary>
        internal int Single { get; }

        // An index out of range (only a null row's, after CheckRun) matches nothing.
        internal bool Matches(int index) => (uint)index < _length && _flags[index] != 0;

        internal int Flag(int index) => (uint)index < _length ? _flags[index] : 0;

        public void Dispose() => ArrayPool<byte>.Shared.Return(_flags);
    }
}
