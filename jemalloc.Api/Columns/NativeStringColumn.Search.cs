using jemalloc.Columns;
using jemalloc.Internal;

namespace jemalloc;

// The whole-column searches: one read scope, then a loop over the raw arrays that checks each row's
// offsets as it reads them (they are public, so a caller may have changed them) and never decodes.
public sealed partial class NativeStringColumn
{
    /// <summary>The first row that holds exactly <paramref name="value"/>, or -1.</summary>
    /// <param name="value">The bytes to find (UTF-8 for text).</param>
    /// <exception cref="InvalidDataException">A row's offsets do not describe bytes inside <see cref="Data"/>.</exception>
    /// <exception cref="ObjectDisposedException">The column was disposed.</exception>
    public long IndexOf(ReadOnlySpan<byte> value) => IndexOf(value, 0);

    /// <summary>The first row that holds <paramref name="value"/> (compared as UTF-8 bytes), or -1.</summary>
    /// <param name="value">The string to find.</param>
    /// <exception cref="ArgumentNullException"><paramref name="value"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException"><paramref name="value"/> holds a lone surrogate (it has no UTF-8 form, so no row can hold it).</exception>
    /// <exception cref="InvalidDataException">A row's offsets do not describe bytes inside <see cref="Data"/>.</exception>
    /// <exception cref="ObjectDisposedException">The column was disposed.</exception>
    public long IndexOf(string value) => IndexOf(value, 0);

    /// <summary>The first row at or after <paramref name="startRow"/> that holds exactly <paramref name="value"/>, or -1.</summary>
    /// <param name="value">The bytes to find (UTF-8 for text).</param>
    /// <param name="startRow">The row to start at.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="startRow"/> is negative or greater than <see cref="Length"/>.</exception>
    /// <exception cref="InvalidDataException">A row's offsets do not describe bytes inside <see cref="Data"/>.</exception>
    /// <exception cref="ObjectDisposedException">The column was disposed.</exception>
    public unsafe long IndexOf(ReadOnlySpan<byte> value, long startRow)
    {
        if ((ulong)startRow > (ulong)Length)
        {
            ThrowHelper.ThrowArgumentOutOfRange(nameof(startRow), startRow, $"The column has {Length:N0} rows.");
        }

        using NativeStringColumnReadScope values = OpenRead();
        values.ThrowIfClosed();
        var rows = new RowReader(values);
        for (long row = startRow; row < Length; row++)
        {
            if (rows.Value(row).SequenceEqual(value) && !rows.IsNull(row))
            {
                return row;
            }
        }

        return -1;
    }

    /// <summary>The first row at or after <paramref name="startRow"/> that holds <paramref name="value"/> (compared as UTF-8 bytes), or -1.</summary>
    /// <inheritdoc cref="IndexOf(ReadOnlySpan{byte}, long)"/>
    /// <exception cref="ArgumentNullException"><paramref name="value"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException"><paramref name="value"/> holds a lone surrogate (it has no UTF-8 form, so no row can hold it).</exception>
    public long IndexOf(string value, long startRow)
    {
        ArgumentNullException.ThrowIfNull(value);
        using Utf8Text text = new(value);
        return IndexOf(text.Bytes, startRow);
    }

    /// <summary>How many rows start with <paramref name="prefix"/> (null rows do not).</summary>
    /// <param name="prefix">The bytes to match (UTF-8 for text).</param>
    /// <exception cref="InvalidDataException">A row's offsets do not describe bytes inside <see cref="Data"/>.</exception>
    /// <exception cref="ObjectDisposedException">The column was disposed.</exception>
    public unsafe long CountStartsWith(ReadOnlySpan<byte> prefix)
    {
        using NativeStringColumnReadScope values = OpenRead();
        values.ThrowIfClosed();
        var rows = new RowReader(values);
        long count = 0;
        for (long row = 0; row < Length; row++)
        {
            if (rows.Value(row).StartsWith(prefix) && !rows.IsNull(row))
            {
                count++;
            }
        }

        return count;
    }

    /// <summary>
    /// Marks in <paramref name="selection"/> (a bitmap in Arrow's layout: bit <c>i % 8</c> of byte <c>i / 8</c>
    /// for row <c>i</c>) the rows that start with <paramref name="prefix"/>, clearing the others, and returns
    /// how many were marked. Null rows are not marked. The bitmap may then be combined with others, or
    /// used as a validity bitmap.
    /// </summary>
    /// <param name="prefix">The bytes to match (UTF-8 for text).</param>
    /// <param name="selection">At least <c>(Length + 7) / 8</c> bytes; the bytes past them are left as they are.</param>
    /// <exception cref="ArgumentNullException"><paramref name="selection"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException"><paramref name="selection"/> is too short, or is one of the column's own arrays.</exception>
    /// <exception cref="InvalidDataException">A row's offsets do not describe bytes inside <see cref="Data"/>.</exception>
    /// <exception cref="ObjectDisposedException">The column or <paramref name="selection"/> was disposed.</exception>
    public unsafe long SelectStartsWith(ReadOnlySpan<byte> prefix, HugeArray<byte> selection)
    {
        ArgumentNullException.ThrowIfNull(selection);
        if (ReferenceEquals(selection, Data) || ReferenceEquals(selection, Validity))
        {
            ThrowHelper.ThrowArgument(nameof(selection), "The selection must be an array of its own, not one of the column's.");
        }

        using NativeStringColumnReadScope values = OpenRead();
        using MemoryLease<byte> selectionLease = selection.Lease();
        if (selectionLease.Length < ColumnChecks.BitmapBytes(Length))
        {
            ThrowHelper.ThrowArgument(nameof(selection), $"A bitmap for {Length:N0} rows needs {ColumnChecks.BitmapBytes(Length):N0} bytes; this one has {selectionLease.Length:N0}.");
        }

        values.ThrowIfClosed();
        var rows = new RowReader(values);
        byte* bits = (byte*)selectionLease.Pointer;
        long count = 0;
        for (long start = 0; start < Length; start += 8)
        {
            int inByte = (int)Math.Min(8, Length - start);
            int mask = 0;
            for (int bit = 0; bit < inByte; bit++)
            {
                long row = start + bit;
                if (rows.Value(row).StartsWith(prefix) && !rows.IsNull(row))
                {
                    mask |= 1 << bit;
                }
            }

            // The last byte's bits past the column's rows are cleared too: nothing past it is a row.
            bits[start >> 3] = (byte)mask;
            count += System.Numerics.BitOperations.PopCount((uint)mask);
        }

        return count;
    }

    /// <summary>Row reads for a whole-column loop, over the pointers of an open scope.</summary>
    private readonly unsafe struct RowReader(NativeStringColumnReadScope scope)
    {
        private readonly long* _offsets = scope.OffsetPointer;
        private readonly byte* _data = scope.DataPointer;
        private readonly byte* _bits = scope.ValidityPointer;
        private readonly long _dataLength = scope.DataLength;

        internal ReadOnlySpan<byte> Value(long row)
        {
            long start = _offsets[row];
            long end = _offsets[row + 1];
            if ((ulong)start > (ulong)end || (ulong)end > (ulong)_dataLength || end - start > int.MaxValue)
            {
                throw new InvalidDataException(ColumnChecks.DescribeBadOffsets(row, start, end, _dataLength) + " The column's offsets were changed after it was made.");
            }

            return new ReadOnlySpan<byte>(_data + start, (int)(end - start));
        }

        internal bool IsNull(long row) => _bits != null && ((_bits[row >> 3] >> (int)(row & 7)) & 1) == 0;
    }
}
