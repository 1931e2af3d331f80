using jemalloc.AddOns;
using jemalloc.Arrow.Ipc;

namespace jemalloc.Arrow;

/// <summary>The reads of Decimal128 and FixedSizeBinary columns into the core's columns of those types.</summary>
public sealed partial class ArrowIpcReader
{
    /// <summary>Reads a Decimal128 column, nulls included, with the library's default options.</summary>
    /// <inheritdoc cref="ReadDecimalColumn(string, AllocationOptions)"/>
    public DecimalColumn ReadDecimalColumn(string column) => ReadDecimalColumn(column, AllocationOptions.Default);

    /// <summary>
    /// Reads a Decimal128 column of every batch into a new <see cref="DecimalColumn"/> of the schema's
    /// precision and scale: each batch's 16-byte values read from the stream straight into one block
    /// (swapped as 16-byte integers when the input is big-endian), and its validity bitmaps, when it
    /// has nulls, into another, both allocated with <paramref name="options"/>.
    /// </summary>
    /// <param name="column">The column's name.</param>
    /// <param name="options">How the blocks (and the reader's small scratch block) are allocated.</param>
    /// <returns>A new column of <see cref="RowCount"/> rows (an input without rows gives a column of none), which the caller owns; its <see cref="DecimalColumn.Validity"/> is <see langword="null"/> when no row is null.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="column"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException">The schema has no column of that name or more than one; the column is of a type another read takes (the message names it); or <paramref name="options"/> cannot be used.</exception>
    /// <exception cref="NotSupportedException">The column is of a type no read takes (nested, a view, Decimal256, dictionary-encoded values other than strings and binary), or declares more than 38 digits or a scale outside 0 to its precision; a batch is compressed; or a column before it has a type whose buffers cannot be counted.</exception>
    /// <exception cref="InvalidOperationException">Another thread is using the reader.</exception>
    /// <exception cref="InvalidDataException">The column declares a precision below 1, or a batch's node or buffers for it do not fit the batch or its body (a value buffer shorter than 16 bytes a row), or the input is shorter than its metadata says.</exception>
    /// <exception cref="OutOfMemoryException">The blocks cannot be allocated.</exception>
    /// <exception cref="IOException">The stream cannot be read.</exception>
    /// <exception cref="ObjectDisposedException">The reader was disposed.</exception>
    public DecimalColumn ReadDecimalColumn(string column, AllocationOptions options) =>
        ReadGuarded(column, index => ReadDecimalsEntered(index, column, options, checkPrecision: true));

    /// <summary>
    /// The tests' read of a decimal column whose values may have more digits than its precision (Arrow's
    /// integration files hold such values), so that every value's byte swap can be compared with another
    /// reader's; the column it gives holds values its precision does not.
    /// </summary>
    internal DecimalColumn ReadDecimalColumnPastPrecision(string column) =>
        ReadGuarded(column, index => ReadDecimalsEntered(index, column, AllocationOptions.Default, checkPrecision: false));

    /// <summary>Reads a FixedSizeBinary column, nulls included, with the library's default options.</summary>
    /// <inheritdoc cref="ReadFixedSizeBinaryColumn(string, AllocationOptions)"/>
    public FixedSizeBinaryColumn ReadFixedSizeBinaryColumn(string column) => ReadFixedSizeBinaryColumn(column, AllocationOptions.Default);

    /// <summary>
    /// Reads a FixedSizeBinary column of every batch into a new <see cref="FixedSizeBinaryColumn"/> of
    /// the schema's byte width: each batch's values read from the stream straight into one data block
    /// (as bytes, so never swapped, whatever the input's byte order), and its validity bitmaps, when it
    /// has nulls, into another, both allocated with <paramref name="options"/>.
    /// </summary>
    /// <param name="column">The column's name.</param>
    /// <param name="options">How the blocks (and the reader's small scratch block) are allocated.</param>
    /// <returns>A new column of <see cref="RowCount"/> rows (an input without rows gives a column of none), which the caller owns; its <see cref="FixedSizeBinaryColumn.Validity"/> is <see langword="null"/> when no row is null.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="column"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException">The schema has no column of that name or more than one; the column is of a type another read takes (the message names it); or <paramref name="options"/> cannot be used.</exception>
    /// <exception cref="NotSupportedException">The column is of a type no read takes (nested, a view, Decimal256, dictionary-encoded values other than strings and binary); a batch is compressed; or a column before it has a type whose buffers cannot be counted.</exception>
    /// <exception cref="InvalidOperationException">Another thread is using the reader.</exception>
    /// <exception cref="InvalidDataException">The column declares a byte width below 1, or a batch's node or buffers for it do not fit the batch or its body, or the input is shorter than its metadata says.</exception>
    /// <exception cref="OutOfMemoryException">The blocks cannot be allocated.</exception>
    /// <exception cref="IOException">The stream cannot be read.</exception>
    /// <exception cref="ObjectDisposedException">The reader was disposed.</exception>
    public FixedSizeBinaryColumn ReadFixedSizeBinaryColumn(string column, AllocationOptions options) =>
        ReadGuarded(column, index => ReadFixedSizeBinaryEntered(index, column, options));

    // One read under the single-user guard; a short input and a file's errors name the file.
    private TResult ReadGuarded<TResult>(string column, Func<int, TResult> read)
    {
        int index = GetColumnIndex(column);
        _guard.Enter(TypeName);
        try
        {
            return read(index);
        }
        catch (EndOfStreamException e)
        {
            throw InFile(new InvalidDataException($"The Arrow IPC input ended while column '{column}' was read: it is shorter than its metadata says.", e), _stream as FileStream);
        }
        catch (InvalidDataException e) when (_stream is FileStream file)
        {
            throw InFile(e, file);
        }
        finally
        {
            _guard.Exit();
        }
    }

    private unsafe DecimalColumn ReadDecimalsEntered(int index, string column, AllocationOptions options, bool checkPrecision)
    {
        ArrowIpcField field = _index.Fields[index];
        IpcType type = field.IpcType;
        if (field.IsDictionaryEncoded || type.Code != IpcTypeCode.Decimal)
        {
            ThrowWrongRead(field, column, "ReadDecimalColumn");
        }

        if (type.BitWidth != 128)
        {
            IpcThrow.NotSupported($"Column '{column}' is {field.TypeName}, a decimal of {type.BitWidth} bits; ReadDecimalColumn reads 128-bit decimals (up to {DecimalColumn.MaxPrecision} digits).");
        }

        if (type.Precision < 1)
        {
            IpcThrow.InvalidData($"Column '{column}' is {field.TypeName}: its precision is {type.Precision}, and a decimal has at least one digit.");
        }

        if (type.Precision > DecimalColumn.MaxPrecision || type.Scale < 0 || type.Scale > type.Precision)
        {
            IpcThrow.NotSupported($"Column '{column}' is {field.TypeName}: a DecimalColumn holds precisions 1 to {DecimalColumn.MaxPrecision} and scales 0 to the precision.");
        }

        var read = new IpcColumnRead(_stream, _index, index);
        (long rows, long nulls) = read.Check(valueBuffers: 1, elementBits: 128);
        HugeArray<Int128>? values = null;
        HugeArray<byte>? validity = null;
        try
        {
            values = new HugeArray<Int128>(Math.Max(1, rows), options);
            using var scratch = new SafeArray<byte>(ScratchBytes, options with { HugePages = false });
            using MemoryLease<byte> scratchLease = scratch.Lease();
            using (MemoryLease<Int128> valueLease = values.Lease())
            {
                read.ReadValues((Int128*)valueLease.Pointer, (byte*)scratchLease.Pointer);
            }

            validity = ReadNulls(read, rows, nulls, options, (byte*)scratchLease.Pointer);
            if (checkPrecision)
            {
                CheckPrecision(values, validity, rows, type.Precision, column);
            }

            return new DecimalColumn(values, validity, rows, type.Precision, type.Scale);
        }
        catch
        {
            values?.Dispose();
            validity?.Dispose();
            throw;
        }
    }

    // A stored integer with more digits than the column's precision comes only from a malformed input, as
    // in Parquet: refused, naming the row, rather than read as a number the column cannot hold.
    private static unsafe void CheckPrecision(HugeArray<Int128> values, HugeArray<byte>? validity, long rows, int precision, string column)
    {
        using MemoryLease<Int128> valueLease = values.Lease();
        using MemoryLease<byte> validityLease = validity is null ? default : validity.Lease();
        var at = (Int128*)valueLease.Pointer;
        long row = DecimalDigits.FirstPastPrecision(at, validity is null ? null : (byte*)validityLease.Pointer, rows, precision);
        if (row >= 0)
        {
            IpcThrow.InvalidData($"Column '{column}' holds {at[row]} at row {row:N0}: more digits than its precision of {precision}.");
        }
    }

    private unsafe FixedSizeBinaryColumn ReadFixedSizeBinaryEntered(int index, string column, AllocationOptions options)
    {
        ArrowIpcField field = _index.Fields[index];
        if (field.IsDictionaryEncoded || field.Type != ArrowIpcType.FixedSizeBinary)
        {
            ThrowWrongRead(field, column, "ReadFixedSizeBinaryColumn");
        }

        int width = field.IpcType.ByteWidth;
        if (width < 1)
        {
            IpcThrow.InvalidData($"Column '{column}' is {field.TypeName}: its byte width is {width}, and a value has at least one byte.");
        }

        var read = new IpcColumnRead(_stream, _index, index);

        // Check has matched every batch's buffer to rows * width bytes of its body, and no two batches
        // share body bytes (a file's footer blocks are refused if they overlap; a stream's messages follow
        // one another), so rows * width is at most the input's length and cannot overflow.
        (long rows, long nulls) = read.Check(valueBuffers: 1, elementBits: width * 8L);
        HugeArray<byte>? data = null;
        HugeArray<byte>? validity = null;
        try
        {
            data = new HugeArray<byte>(Math.Max(1, rows * width), options);
            using (MemoryLease<byte> dataLease = data.Lease())
            {
                read.ReadFixedSize((byte*)dataLease.Pointer, width);
            }

            if (nulls > 0)
            {
                using var scratch = new SafeArray<byte>(ScratchBytes, options with { HugePages = false });
                using MemoryLease<byte> scratchLease = scratch.Lease();
                validity = ReadNulls(read, rows, nulls, options, (byte*)scratchLease.Pointer);
            }

            return new FixedSizeBinaryColumn(data, validity, rows, width);
        }
        catch
        {
            data?.Dispose();
            validity?.Dispose();
            throw;
        }
    }

    // The concatenated validity bitmaps, or null when no batch has a null.
    private static unsafe HugeArray<byte>? ReadNulls(in IpcColumnRead read, long rows, long nulls, AllocationOptions options, byte* scratch)
    {
        if (nulls == 0)
        {
            return null;
        }

        var validity = new HugeArray<byte>(ValidityBitmap.BytesFor(rows), options);
        try
        {
            using MemoryLease<byte> bitsLease = validity.Lease();
            read.ReadValidity((byte*)bitsLease.Pointer, scratch);
            return validity;
        }
        catch
        {
            validity.Dispose();
            throw;
        }
    }
}
