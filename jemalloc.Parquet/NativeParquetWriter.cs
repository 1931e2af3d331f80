using jemalloc.AddOns;
using jemalloc.Parquet.Internal;
using ParquetSharp;
using ParquetSharp.Schema;

namespace jemalloc.Parquet;

/// <summary>
/// Writes native columns to a Parquet file: add the columns (<see cref="HugeArray{T}"/>,
/// <see cref="SafeArray{T}"/>, a <see cref="NullableColumn{T}"/>, or <see cref="StoredUtf8String"/>
/// values), then call <see cref="Write"/>. The values go to ParquetSharp's encoder straight from
/// native memory, a chunk of rows at a time, with no managed array in between and no managed
/// allocation per row.
/// </summary>
/// <remarks>
/// <para>
/// Element types: <see cref="bool"/> (BOOLEAN), <see cref="sbyte"/>, <see cref="byte"/>,
/// <see cref="short"/>, <see cref="ushort"/>, <see cref="int"/>, <see cref="uint"/> (INT32, with the
/// INT logical type of their width and sign), <see cref="long"/>, <see cref="ulong"/> (INT64),
/// <see cref="Int96"/>, <see cref="float"/>, <see cref="double"/>, <see cref="Half"/> (FLOAT16); decimals
/// (<see cref="Add(string, DecimalColumn)"/>), fixed-size binary and UUIDs (<see cref="Add(string, FixedSizeBinaryColumn)"/>,
/// <see cref="AddUuid"/>), dates and timestamps (<see cref="AddDate"/>, <see cref="AddTimestamp"/>). A column
/// with a validity bitmap is OPTIONAL (its cleared bits are nulls), one without is REQUIRED.
/// </para>
/// <para>
/// The writer holds references to the columns, not copies: <see cref="Write"/> reads them as they
/// are then, and holds each (<see cref="NativeBuffer{T}.Hold"/>) while it writes, so none can be
/// disposed or its arena reset meanwhile, whatever the caller's <c>Release()</c> calls. One thread uses
/// an instance at a time: a call from another thread while one is under way throws
/// <see cref="InvalidOperationException"/> and changes nothing.
/// </para>
/// </remarks>
public sealed partial class NativeParquetWriter
{
    private const string TypeName = nameof(NativeParquetWriter);

    private readonly List<WriterColumn> _columns = [];
    private SingleUserGuard _guard;
    private Compression _compression = Compression.Snappy;
    private long _rowGroupSize = 1L << 20;

    /// <summary>The codec every column is compressed with: <see cref="Compression.Snappy"/> unless set.</summary>
    /// <exception cref="ArgumentOutOfRangeException">Set to a codec other than Uncompressed, Snappy, Gzip, Brotli, Zstd or Lz4.</exception>
    public Compression Compression
    {
        get => _compression;
        set
        {
            if (value is not (Compression.Uncompressed or Compression.Snappy or Compression.Gzip or Compression.Brotli or Compression.Zstd or Compression.Lz4))
            {
                ParquetThrow.ArgumentOutOfRange(nameof(value), value, "The codecs are Uncompressed, Snappy, Gzip, Brotli, Zstd and Lz4.");
            }

            _compression = value;
        }
    }

    /// <summary>The most rows in one row group: 1,048,576 unless set.</summary>
    /// <exception cref="ArgumentOutOfRangeException">Set to zero or less.</exception>
    public long RowGroupSize
    {
        get => _rowGroupSize;
        set
        {
            ArgumentOutOfRangeException.ThrowIfNegativeOrZero(value);
            _rowGroupSize = value;
        }
    }

    /// <summary>
    /// Whether each data page carries a CRC-32 checksum of its bytes, which readers that verify them
    /// (<see cref="ParquetReadOptions.VerifyPageChecksums"/>, on by default) check before decoding the page:
    /// <see langword="true"/> unless set. Writing them costs one pass over each page's compressed bytes.
    /// </summary>
    public bool WritePageChecksums { get; set; } = true;

    /// <summary>How the writer's scratch blocks (definition levels, widened integers, gathered strings) are allocated.</summary>
    public AllocationOptions ScratchOptions { get; set; }

    /// <summary>The number of columns added.</summary>
    public int ColumnCount => _columns.Count;

    /// <summary>The number of rows: every column's length (0 before the first column is added).</summary>
    public long RowCount => _columns.Count == 0 ? 0 : _columns[0].Length;

    /// <summary>Adds a REQUIRED column (no nulls) written from <paramref name="values"/>.</summary>
    /// <typeparam name="T">The element type (see the class remarks).</typeparam>
    /// <param name="name">The column's name.</param>
    /// <param name="values">The values: a <see cref="HugeArray{T}"/> or a <see cref="SafeArray{T}"/>.</param>
    /// <returns>This writer.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="name"/> or <paramref name="values"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty or already used, or the column's length differs from the columns added before.</exception>
    /// <exception cref="NotSupportedException"><typeparamref name="T"/> is no Parquet element type.</exception>
    /// <exception cref="ObjectDisposedException"><paramref name="values"/> was disposed.</exception>
    public NativeParquetWriter Add<T>(string name, NativeBuffer<T> values)
        where T : unmanaged, IEquatable<T>
    {
        ParquetTypes.CheckWritable<T>();
        ArgumentNullException.ThrowIfNull(values);
        _guard.Enter(TypeName);
        try
        {
            long length = LengthOf(values);
            CheckName(name, length);
            _columns.Add(NewNumericColumn(name, values, length, validity: null));
            return this;
        }
        finally
        {
            _guard.Exit();
        }
    }

    /// <summary>Adds an OPTIONAL column written from <paramref name="values"/>, null where <paramref name="validity"/>'s bit is cleared.</summary>
    /// <typeparam name="T">The element type (see the class remarks).</typeparam>
    /// <param name="name">The column's name.</param>
    /// <param name="values">The values; a null row's value is not written.</param>
    /// <param name="validity">The validity bitmap in Arrow's layout (bit <c>i % 8</c> of byte <c>i / 8</c> set when row <c>i</c> has a value), at least <c>(rows + 7) / 8</c> bytes.</param>
    /// <returns>This writer.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="name"/>, <paramref name="values"/> or <paramref name="validity"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty or already used; the column's length differs from the columns added before; or <paramref name="validity"/> is too short.</exception>
    /// <exception cref="NotSupportedException"><typeparamref name="T"/> is no Parquet element type.</exception>
    /// <exception cref="ObjectDisposedException"><paramref name="values"/> or <paramref name="validity"/> was disposed.</exception>
    public NativeParquetWriter Add<T>(string name, NativeBuffer<T> values, NativeBuffer<byte> validity)
        where T : unmanaged, IEquatable<T>
    {
        ParquetTypes.CheckWritable<T>();
        ArgumentNullException.ThrowIfNull(values);
        ArgumentNullException.ThrowIfNull(validity);
        _guard.Enter(TypeName);
        try
        {
            long length = LengthOf(values);
            long bitmapBytes = LengthOf(validity);
            CheckName(name, length);
            if (bitmapBytes < ValidityBitmap.BytesFor(length))
            {
                ParquetThrow.Argument(nameof(validity), $"A validity bitmap for {length:N0} rows needs {ValidityBitmap.BytesFor(length):N0} bytes; this one has {bitmapBytes:N0}.");
            }

            _columns.Add(NewNumericColumn(name, values, length, validity));
            return this;
        }
        finally
        {
            _guard.Exit();
        }
    }

    /// <summary>Adds an OPTIONAL column written from a nullable column's values and bitmap: its <see cref="NullableColumn{T}.Length"/> rows.</summary>
    /// <typeparam name="T">The element type (see the class remarks).</typeparam>
    /// <param name="name">The column's name.</param>
    /// <param name="column">The column.</param>
    /// <returns>This writer.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="name"/> or <paramref name="column"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty or already used, or the column's length differs from the columns added before.</exception>
    /// <exception cref="NotSupportedException"><typeparamref name="T"/> is no Parquet element type.</exception>
    /// <exception cref="ObjectDisposedException">The column was disposed.</exception>
    public NativeParquetWriter Add<T>(string name, NullableColumn<T> column)
        where T : unmanaged, IEquatable<T>
    {
        ArgumentNullException.ThrowIfNull(column);
        ParquetTypes.CheckWritable<T>();
        _guard.Enter(TypeName);
        try
        {
            // The column's own row count: its arrays may be longer (an empty column keeps one element).
            long length = column.Length;
            column.Values.ThrowIfInvalid();
            column.Validity.ThrowIfInvalid();
            CheckName(name, length);
            _columns.Add(new NumericWriterColumn<T>(name, column.Values, length, column.Validity));
            return this;
        }
        finally
        {
            _guard.Exit();
        }
    }

    /// <summary>
    /// Adds an OPTIONAL UTF-8 string column (BYTE_ARRAY with the STRING logical type) written from
    /// <see cref="StoredUtf8String"/> values; <see langword="default"/> values are written as nulls.
    /// </summary>
    /// <param name="name">The column's name.</param>
    /// <param name="values">The strings, kept in one or more <see cref="Utf8StringStore"/>s that must stay open until <see cref="Write"/> returns.</param>
    /// <returns>This writer.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="name"/> or <paramref name="values"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty or already used, or the column's length differs from the columns added before.</exception>
    /// <exception cref="ObjectDisposedException"><paramref name="values"/> was disposed.</exception>
    public NativeParquetWriter AddStrings(string name, NativeBuffer<StoredUtf8String> values)
    {
        ArgumentNullException.ThrowIfNull(values);
        _guard.Enter(TypeName);
        try
        {
            long length = LengthOf(values);
            CheckName(name, length);
            _columns.Add(new StringWriterColumn(name, values, length));
            return this;
        }
        finally
        {
            _guard.Exit();
        }
    }

    /// <summary>
    /// Adds a BYTE_ARRAY column written from a <see cref="NativeDictionaryColumn"/>, typed as
    /// <see cref="Add(string, NativeStringColumn)"/> types a string column. Each row's value goes to the
    /// encoder from the dictionary's data block, uncopied; the encoder writes dictionary-encoded pages (a
    /// dictionary page and indices per chunk), falling back to plain pages when a chunk's dictionary page fills.
    /// </summary>
    /// <param name="name">The column's name.</param>
    /// <param name="column">The column; held, with its arrays and its dictionary's, for the whole of <see cref="Write"/>.</param>
    /// <returns>This writer.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="name"/> or <paramref name="column"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty or already used, or the column's length differs from the columns added before.</exception>
    /// <exception cref="ObjectDisposedException">The column was disposed.</exception>
    public NativeParquetWriter Add(string name, NativeDictionaryColumn column)
    {
        ArgumentNullException.ThrowIfNull(column);
        _guard.Enter(TypeName);
        try
        {
            column.Indices.ThrowIfInvalid();
            column.Dictionary.Offsets.ThrowIfInvalid();
            column.Dictionary.Data.ThrowIfInvalid();
            column.Validity?.ThrowIfInvalid();
            CheckName(name, column.Length);
            _columns.Add(new NativeDictionaryWriterColumn(name, column));
            return this;
        }
        finally
        {
            _guard.Exit();
        }
    }

    /// <summary>
    /// Adds a BYTE_ARRAY column written from a <see cref="NativeStringColumn"/>: STRING for a text column,
    /// no logical type for binary; OPTIONAL (its null rows written as nulls) when the column has a validity
    /// bitmap, REQUIRED otherwise. The values go to the encoder from the column's data block, uncopied.
    /// </summary>
    /// <param name="name">The column's name.</param>
    /// <param name="column">The column; held, with its three arrays, for the whole of <see cref="Write"/>.</param>
    /// <returns>This writer.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="name"/> or <paramref name="column"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty or already used, or the column's length differs from the columns added before.</exception>
    /// <exception cref="ObjectDisposedException">The column was disposed.</exception>
    public NativeParquetWriter Add(string name, NativeStringColumn column)
    {
        ArgumentNullException.ThrowIfNull(column);
        _guard.Enter(TypeName);
        try
        {
            column.Offsets.ThrowIfInvalid();
            column.Data.ThrowIfInvalid();
            column.Validity?.ThrowIfInvalid();
            CheckName(name, column.Length);
            _columns.Add(new NativeStringWriterColumn(name, column));
            return this;
        }
        finally
        {
            _guard.Exit();
        }
    }

    /// <summary>
    /// Writes the columns to a new Parquet file at <paramref name="path"/>, in row groups of at most
    /// <see cref="RowGroupSize"/> rows, replacing any file there only once the new one is complete: the
    /// write goes to a temporary file of a hidden name in the same folder, which is then renamed to
    /// <paramref name="path"/>. A write that is refused or fails deletes its temporary file and leaves
    /// whatever was at <paramref name="path"/> as it was. A symbolic link is followed (the file it names is
    /// replaced, and keeps its permissions); a device or pipe is written in place.
    /// </summary>
    /// <param name="path">The file's path.</param>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty or ends with a folder separator.</exception>
    /// <exception cref="InvalidOperationException">No column was added, a decimal column holds a valid value with more digits than its precision, or another thread is using the writer.</exception>
    /// <exception cref="ObjectDisposedException">A column's memory was disposed, or a string's store was reset or disposed.</exception>
    /// <exception cref="InvalidDataException">A string column's offsets, or a dictionary column's indices or its dictionary's offsets, were changed after it was made and name bytes outside it.</exception>
    /// <exception cref="DirectoryNotFoundException">The folder of <paramref name="path"/> does not exist.</exception>
    /// <exception cref="UnauthorizedAccessException"><paramref name="path"/> is a folder, or the file there or its folder cannot be written.</exception>
    /// <exception cref="IOException">The new file cannot be created or moved into place.</exception>
    /// <exception cref="ParquetException">ParquetSharp cannot write the file (for instance, the disk is full).</exception>
    public void Write(string path)
    {
        ArgumentException.ThrowIfNullOrEmpty(path);
        _guard.Enter(TypeName);
        try
        {
            if (_columns.Count == 0)
            {
                ParquetThrow.InvalidOperation("Add at least one column before writing.");
            }

            FileReplacement.Write(path, WriteEntered);
        }
        finally
        {
            _guard.Exit();
        }
    }

    // Writes the file at `path`, a temporary file that FileReplacement deletes if this throws.
    private void WriteEntered(string path)
    {
        var holds = new List<MemoryHold>(_columns.Count * 2);
        var nodes = new List<Node>(_columns.Count);
        try
        {
            foreach (WriterColumn column in _columns)
            {
                column.Hold(holds);
            }

            foreach (WriterColumn column in _columns)
            {
                nodes.Add(column.CreateNode());
            }

            using var schema = new GroupNode("schema", Repetition.Required, nodes);
            using var builder = new WriterPropertiesBuilder();
            builder.Compression(_compression);
            if (WritePageChecksums)
            {
                builder.EnablePageChecksum();
            }
            else
            {
                builder.DisablePageChecksum();
            }

            using WriterProperties properties = builder.Build();
            using var file = new ParquetFileWriter(path, schema, properties);
            long rows = RowCount;
            for (long start = 0; start < rows; start += _rowGroupSize)
            {
                long count = Math.Min(_rowGroupSize, rows - start);
                using RowGroupWriter group = file.AppendRowGroup();
                foreach (WriterColumn column in _columns)
                {
                    using ColumnWriter writer = group.NextColumn();
                    column.Write(writer, start, count, ScratchOptions);
                }
            }

            file.Close();
        }
        finally
        {
            foreach (Node node in nodes)
            {
                node.Dispose();
            }

            foreach (MemoryHold hold in holds)
            {
                hold.Dispose();
            }
        }
    }

    private static long LengthOf<T>(NativeBuffer<T> buffer)
        where T : unmanaged, IEquatable<T>
    {
        using MemoryLease<T> lease = buffer.Lease();
        return lease.Length;
    }

    private void CheckName(string name, long length)
    {
        ArgumentException.ThrowIfNullOrEmpty(name);
        foreach (WriterColumn column in _columns)
        {
            if (column.Name == name)
            {
                ParquetThrow.Argument(nameof(name), $"A column named '{name}' was added already.");
            }
        }

        if (_columns.Count > 0 && length != _columns[0].Length)
        {
            ParquetThrow.Argument(nameof(name), $"Column '{name}' has {length:N0} rows; the columns added before have {_columns[0].Length:N0}.");
        }
    }
}
