using Apache.Arrow.Types;
using jemalloc.AddOns;
using jemalloc.Arrow.Ipc;

namespace jemalloc.Arrow;

/// <summary>
/// Writes native columns as Arrow IPC, in the file or the streaming format: add the columns
/// (<see cref="HugeArray{T}"/> or <see cref="SafeArray{T}"/>, each with an optional validity bitmap, and
/// <see cref="NativeStringColumn"/>s, <see cref="DecimalColumn"/>s and <see cref="FixedSizeBinaryColumn"/>s),
/// then call <see cref="Write(Stream, ArrowIpcFormat)"/>. Every buffer goes to the stream straight
/// from its native block (booleans are packed into bits through a small native scratch block), in
/// record batches of <see cref="BatchSize"/> rows, little-endian, each buffer padded to 8 bytes.
/// </summary>
/// <remarks>
/// <para>
/// Element types: <see cref="bool"/> (Bool), <see cref="sbyte"/>, <see cref="byte"/>, <see cref="short"/>,
/// <see cref="ushort"/>, <see cref="int"/>, <see cref="uint"/>, <see cref="long"/>, <see cref="ulong"/>
/// (Int of their width and sign), <see cref="Half"/>, <see cref="float"/>, <see cref="double"/>
/// (FloatingPoint); and, through their own methods, Date32, Date64, Timestamp, Time32, Time64 and
/// Duration columns of their storage integers; strings and binary from a <see cref="NativeStringColumn"/>
/// (Utf8, Binary, LargeUtf8, LargeBinary); Decimal128 from a <see cref="DecimalColumn"/> and FixedSizeBinary
/// from a <see cref="FixedSizeBinaryColumn"/>. A column with a validity bitmap is nullable (its
/// cleared bits are nulls; a batch without nulls gets no bitmap buffer).
/// </para>
/// <para>
/// The writer holds references to the columns, not copies: a write reads them as they are then, and
/// holds each (<see cref="NativeBuffer{T}.Hold"/>) while it writes, so none can be disposed or its
/// arena reset meanwhile. One thread uses an instance at a time: a call from another thread while
/// one is under way throws <see cref="InvalidOperationException"/> and changes nothing.
/// </para>
/// </remarks>
public sealed class ArrowIpcWriter
{
    private const string TypeName = nameof(ArrowIpcWriter);
    private const int ScratchBytes = 64 * 1024;
    private const short MetadataVersionV5 = 4;
    private const byte SchemaHeader = 1;
    private const byte RecordBatchHeader = 3;
    private static readonly byte[] FileMagic = "ARROW1\0\0"u8.ToArray();

    private readonly List<IpcWriterColumn> _columns = [];
    private SingleUserGuard _guard;
    private long _batchSize = 1L << 20;

    /// <summary>The most rows in one record batch: 1,048,576 unless set.</summary>
    /// <exception cref="ArgumentOutOfRangeException">Set to zero or less, or to a number that is not a multiple of 8 (so that every batch's validity bitmap starts on a byte of the column's).</exception>
    public long BatchSize
    {
        get => _batchSize;
        set
        {
            ArgumentOutOfRangeException.ThrowIfNegativeOrZero(value);
            if ((value & 7) != 0)
            {
                throw new ArgumentOutOfRangeException(nameof(value), value, "The batch size must be a multiple of 8, so that every batch's validity bitmap starts on a byte.");
            }

            _batchSize = value;
        }
    }

    /// <summary>How the writer's scratch block (packed booleans) is allocated.</summary>
    public AllocationOptions ScratchOptions { get; set; }

    /// <summary>The number of columns added.</summary>
    public int ColumnCount => _columns.Count;

    /// <summary>The number of rows: every column's length (0 before the first column is added).</summary>
    public long RowCount => _columns.Count == 0 ? 0 : _columns[0].Length;

    /// <summary>For tests only: writes a big-endian schema and swaps every value, as a big-endian machine's Arrow would.</summary>
    internal bool BigEndian { get; set; }

    /// <summary>Adds a column of <paramref name="values"/>, nullable if <paramref name="validity"/> is given.</summary>
    /// <typeparam name="T">The element type (see the class remarks).</typeparam>
    /// <param name="name">The column's name.</param>
    /// <param name="values">The values: a <see cref="HugeArray{T}"/> or a <see cref="SafeArray{T}"/>.</param>
    /// <param name="validity">The validity bitmap in Arrow's layout (bit <c>i % 8</c> of byte <c>i / 8</c> set when row <c>i</c> has a value), at least <c>(rows + 7) / 8</c> bytes; <see langword="null"/> for a column without nulls.</param>
    /// <returns>This writer.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="name"/> or <paramref name="values"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty or already used; the column's length differs from the columns added before; or <paramref name="validity"/> is too short.</exception>
    /// <exception cref="NotSupportedException"><typeparamref name="T"/> is no Arrow element type.</exception>
    /// <exception cref="ObjectDisposedException"><paramref name="values"/> or <paramref name="validity"/> was disposed.</exception>
    /// <exception cref="InvalidOperationException">Another thread is using the writer.</exception>
    public ArrowIpcWriter Add<T>(string name, NativeBuffer<T> values, NativeBuffer<byte>? validity = null)
        where T : unmanaged, IEquatable<T> => AddColumn(name, IpcType.Of<T>(), values, validity);

    /// <summary>Adds a string or binary column: Utf8 or Binary (as <see cref="NativeStringColumn.IsUtf8"/> says), or LargeUtf8 or LargeBinary with <paramref name="largeOffsets"/>; nullable if the column has a validity bitmap.</summary>
    /// <param name="name">The column's name.</param>
    /// <param name="column">The column; its data block is written as it is, each batch's offsets rebased to start at 0.</param>
    /// <param name="largeOffsets">Whether to write 64-bit offsets (LargeUtf8, LargeBinary); with 32-bit ones, a batch's values must hold at most <see cref="int.MaxValue"/> bytes.</param>
    /// <returns>This writer.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="name"/> or <paramref name="column"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty or already used, or the column's length differs from the columns added before.</exception>
    /// <exception cref="ObjectDisposedException">The column was disposed.</exception>
    /// <exception cref="InvalidOperationException">Another thread is using the writer.</exception>
    public ArrowIpcWriter Add(string name, NativeStringColumn column, bool largeOffsets = false)
    {
        ArgumentNullException.ThrowIfNull(column);
        _guard.Enter(TypeName);
        try
        {
            column.Offsets.ThrowIfInvalid();
            CheckName(name, column.Length);
            _columns.Add(new IpcStringWriterColumn(name, column, largeOffsets));
            return this;
        }
        finally
        {
            _guard.Exit();
        }
    }

    /// <summary>Adds a Decimal128 column of the column's precision and scale, its 16-byte unscaled values written straight from its block; nullable if the column has a validity bitmap.</summary>
    /// <param name="name">The column's name.</param>
    /// <param name="column">The column; its first <see cref="DecimalColumn.Length"/> values are written.</param>
    /// <returns>This writer.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="name"/> or <paramref name="column"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty or already used, or the column's length differs from the columns added before.</exception>
    /// <exception cref="ObjectDisposedException">The column was disposed.</exception>
    /// <exception cref="InvalidOperationException">Another thread is using the writer.</exception>
    public ArrowIpcWriter Add(string name, DecimalColumn column)
    {
        ArgumentNullException.ThrowIfNull(column);
        _guard.Enter(TypeName);
        try
        {
            column.Values.ThrowIfInvalid();
            CheckName(name, column.Length);
            _columns.Add(new IpcWriterColumnOf<Int128>(name, IpcType.Decimal(column.Precision, column.Scale, 128), column.Values, column.Length, column.Validity));
            return this;
        }
        finally
        {
            _guard.Exit();
        }
    }

    /// <summary>Adds a FixedSizeBinary column of the column's byte width, its values written straight from its data block (bytes: never swapped); nullable if the column has a validity bitmap.</summary>
    /// <param name="name">The column's name.</param>
    /// <param name="column">The column; its first <see cref="FixedSizeBinaryColumn.Length"/> values are written.</param>
    /// <returns>This writer.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="name"/> or <paramref name="column"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty or already used, or the column's length differs from the columns added before.</exception>
    /// <exception cref="ObjectDisposedException">The column was disposed.</exception>
    /// <exception cref="InvalidOperationException">Another thread is using the writer.</exception>
    public ArrowIpcWriter Add(string name, FixedSizeBinaryColumn column)
    {
        ArgumentNullException.ThrowIfNull(column);
        _guard.Enter(TypeName);
        try
        {
            column.Data.ThrowIfInvalid();
            CheckName(name, column.Length);
            _columns.Add(new IpcFixedSizeBinaryWriterColumn(name, column));
            return this;
        }
        finally
        {
            _guard.Exit();
        }
    }

    /// <summary>Adds a Date32 column: days since the UNIX epoch.</summary>
    /// <inheritdoc cref="Add{T}(string, NativeBuffer{T}, NativeBuffer{byte})"/>
    public ArrowIpcWriter AddDate32(string name, NativeBuffer<int> values, NativeBuffer<byte>? validity = null) =>
        AddColumn(name, IpcType.Date(days: true), values, validity);

    /// <summary>Adds a Date64 column: milliseconds since the UNIX epoch.</summary>
    /// <inheritdoc cref="Add{T}(string, NativeBuffer{T}, NativeBuffer{byte})"/>
    public ArrowIpcWriter AddDate64(string name, NativeBuffer<long> values, NativeBuffer<byte>? validity = null) =>
        AddColumn(name, IpcType.Date(days: false), values, validity);

    /// <summary>Adds a Timestamp column: time since the UNIX epoch in <paramref name="unit"/>, in <paramref name="timeZone"/> (none: a local time).</summary>
    /// <param name="name">The column's name.</param>
    /// <param name="values">The timestamps.</param>
    /// <param name="unit">Their unit.</param>
    /// <param name="timeZone">An IANA time zone name or an offset such as <c>+07:30</c>, or <see langword="null"/>.</param>
    /// <param name="validity">The validity bitmap (see <see cref="Add{T}(string, NativeBuffer{T}, NativeBuffer{byte})"/>), or <see langword="null"/>.</param>
    /// <returns>This writer.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="name"/> or <paramref name="values"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException"><paramref name="name"/> or <paramref name="timeZone"/> is empty, or <paramref name="name"/> already used; the column's length differs from the columns added before; or <paramref name="validity"/> is too short.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="unit"/> is not a unit.</exception>
    /// <exception cref="ObjectDisposedException"><paramref name="values"/> or <paramref name="validity"/> was disposed.</exception>
    /// <exception cref="InvalidOperationException">Another thread is using the writer.</exception>
    public ArrowIpcWriter AddTimestamp(string name, NativeBuffer<long> values, TimeUnit unit, string? timeZone = null, NativeBuffer<byte>? validity = null)
    {
        CheckUnit(unit, TimeUnit.Second, TimeUnit.Nanosecond);
        if (timeZone is not null)
        {
            ArgumentException.ThrowIfNullOrEmpty(timeZone);
        }

        return AddColumn(name, IpcType.Timestamp(unit, timeZone), values, validity);
    }

    /// <summary>Adds a Time32 column: the time of day in seconds or milliseconds.</summary>
    /// <param name="name">The column's name.</param>
    /// <param name="values">The times of day.</param>
    /// <param name="unit"><see cref="TimeUnit.Second"/> or <see cref="TimeUnit.Millisecond"/>.</param>
    /// <param name="validity">The validity bitmap (see <see cref="Add{T}(string, NativeBuffer{T}, NativeBuffer{byte})"/>), or <see langword="null"/>.</param>
    /// <returns>This writer.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="name"/> or <paramref name="values"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty or already used; the column's length differs from the columns added before; or <paramref name="validity"/> is too short.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="unit"/> is not seconds or milliseconds (Arrow's 32-bit times).</exception>
    /// <exception cref="ObjectDisposedException"><paramref name="values"/> or <paramref name="validity"/> was disposed.</exception>
    /// <exception cref="InvalidOperationException">Another thread is using the writer.</exception>
    public ArrowIpcWriter AddTime(string name, NativeBuffer<int> values, TimeUnit unit, NativeBuffer<byte>? validity = null)
    {
        CheckUnit(unit, TimeUnit.Second, TimeUnit.Millisecond);
        return AddColumn(name, IpcType.Time(unit), values, validity);
    }

    /// <summary>Adds a Time64 column: the time of day in microseconds or nanoseconds.</summary>
    /// <param name="name">The column's name.</param>
    /// <param name="values">The times of day.</param>
    /// <param name="unit"><see cref="TimeUnit.Microsecond"/> or <see cref="TimeUnit.Nanosecond"/>.</param>
    /// <param name="validity">The validity bitmap (see <see cref="Add{T}(string, NativeBuffer{T}, NativeBuffer{byte})"/>), or <see langword="null"/>.</param>
    /// <returns>This writer.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="name"/> or <paramref name="values"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty or already used; the column's length differs from the columns added before; or <paramref name="validity"/> is too short.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="unit"/> is not microseconds or nanoseconds (Arrow's 64-bit times).</exception>
    /// <exception cref="ObjectDisposedException"><paramref name="values"/> or <paramref name="validity"/> was disposed.</exception>
    /// <exception cref="InvalidOperationException">Another thread is using the writer.</exception>
    public ArrowIpcWriter AddTime(string name, NativeBuffer<long> values, TimeUnit unit, NativeBuffer<byte>? validity = null)
    {
        CheckUnit(unit, TimeUnit.Microsecond, TimeUnit.Nanosecond);
        return AddColumn(name, IpcType.Time(unit), values, validity);
    }

    /// <summary>Adds a Duration column: elapsed times in <paramref name="unit"/>.</summary>
    /// <param name="name">The column's name.</param>
    /// <param name="values">The durations.</param>
    /// <param name="unit">Their unit.</param>
    /// <param name="validity">The validity bitmap (see <see cref="Add{T}(string, NativeBuffer{T}, NativeBuffer{byte})"/>), or <see langword="null"/>.</param>
    /// <returns>This writer.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="name"/> or <paramref name="values"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty or already used; the column's length differs from the columns added before; or <paramref name="validity"/> is too short.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="unit"/> is not a unit.</exception>
    /// <exception cref="ObjectDisposedException"><paramref name="values"/> or <paramref name="validity"/> was disposed.</exception>
    /// <exception cref="InvalidOperationException">Another thread is using the writer.</exception>
    public ArrowIpcWriter AddDuration(string name, NativeBuffer<long> values, TimeUnit unit, NativeBuffer<byte>? validity = null)
    {
        CheckUnit(unit, TimeUnit.Second, TimeUnit.Nanosecond);
        return AddColumn(name, IpcType.Duration(unit), values, validity);
    }

    /// <summary>
    /// Writes the columns to a new file at <paramref name="path"/>, replacing any file there only once the
    /// new one is complete: the write goes to a temporary file of a hidden name in the same folder, which is
    /// then renamed to <paramref name="path"/>. A write that is refused or fails deletes its temporary file
    /// and leaves whatever was at <paramref name="path"/> as it was. A symbolic link is followed (the file it
    /// names is replaced, and keeps its permissions); a device or pipe is written in place.
    /// </summary>
    /// <param name="path">The file's path.</param>
    /// <param name="format">The file format (the default) or the streaming format.</param>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty or ends with a folder separator.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="format"/> is not a format.</exception>
    /// <exception cref="InvalidOperationException">No column was added, a decimal column holds a valid value with more digits than its precision, a batch of a string column written with 32-bit offsets holds more bytes than they reach, or another thread is using the writer.</exception>
    /// <exception cref="InvalidDataException">A string column's offsets were changed after it was made and name bytes outside its data block or do not ascend.</exception>
    /// <exception cref="ObjectDisposedException">A column's memory was disposed.</exception>
    /// <exception cref="DirectoryNotFoundException">The folder of <paramref name="path"/> does not exist.</exception>
    /// <exception cref="UnauthorizedAccessException"><paramref name="path"/> is a folder, or the file there or its folder cannot be written.</exception>
    /// <exception cref="IOException">The file cannot be written or moved into place.</exception>
    public void Write(string path, ArrowIpcFormat format = ArrowIpcFormat.File)
    {
        ArgumentException.ThrowIfNullOrEmpty(path);
        CheckFormat(format);
        _guard.Enter(TypeName);
        try
        {
            CheckColumns();
            FileReplacement.Write(path, file =>
            {
                // Shared with readers: a pipe written in place is open to its reader too.
                using var stream = new FileStream(file, FileMode.Create, FileAccess.Write, FileShare.Read, bufferSize: 0);
                WriteEntered(stream, format);
            });
        }
        finally
        {
            _guard.Exit();
        }
    }

    /// <summary>Writes the columns to <paramref name="stream"/> from its current position; the stream is left open.</summary>
    /// <param name="stream">A writable stream (it need not seek).</param>
    /// <param name="format">The file format (the default) or the streaming format.</param>
    /// <exception cref="ArgumentNullException"><paramref name="stream"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException"><paramref name="stream"/> cannot be written.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="format"/> is not a format.</exception>
    /// <exception cref="InvalidOperationException">No column was added, a decimal column holds a valid value with more digits than its precision, a batch of a string column written with 32-bit offsets holds more bytes than they reach, or another thread is using the writer.</exception>
    /// <exception cref="InvalidDataException">A string column's offsets were changed after it was made and name bytes outside its data block or do not ascend; what was written to <paramref name="stream"/> before is left there.</exception>
    /// <exception cref="ObjectDisposedException">A column's memory was disposed.</exception>
    /// <exception cref="IOException">The stream cannot be written.</exception>
    public void Write(Stream stream, ArrowIpcFormat format = ArrowIpcFormat.File)
    {
        ArgumentNullException.ThrowIfNull(stream);
        if (!stream.CanWrite)
        {
            IpcThrow.Argument(nameof(stream), "The stream cannot be written.");
        }

        CheckFormat(format);
        _guard.Enter(TypeName);
        try
        {
            WriteEntered(stream, format);
        }
        finally
        {
            _guard.Exit();
        }
    }

    private void CheckColumns()
    {
        if (_columns.Count == 0)
        {
            IpcThrow.InvalidOperation("Add at least one column before writing.");
        }
    }

    private static void CheckFormat(ArrowIpcFormat format)
    {
        if (format is not (ArrowIpcFormat.File or ArrowIpcFormat.Stream))
        {
            throw new ArgumentOutOfRangeException(nameof(format), format, "The formats are File and Stream.");
        }
    }

    private static void CheckUnit(TimeUnit unit, TimeUnit first, TimeUnit last)
    {
        if (unit < first || unit > last)
        {
            throw new ArgumentOutOfRangeException(nameof(unit), unit, $"The unit must be {first} to {last}.");
        }
    }

    private static long LengthOf<T>(NativeBuffer<T> buffer)
        where T : unmanaged, IEquatable<T>
    {
        using MemoryLease<T> lease = buffer.Lease();
        return lease.Length;
    }

    private ArrowIpcWriter AddColumn<T>(string name, IpcType type, NativeBuffer<T> values, NativeBuffer<byte>? validity)
        where T : unmanaged, IEquatable<T>
    {
        ArgumentNullException.ThrowIfNull(values);
        _guard.Enter(TypeName);
        try
        {
            long length = LengthOf(values);
            CheckName(name, length);

            if (validity is not null && LengthOf(validity) < ValidityBitmap.BytesFor(length))
            {
                IpcThrow.Argument(nameof(validity), $"A validity bitmap for {length:N0} rows needs {ValidityBitmap.BytesFor(length):N0} bytes; the one for column '{name}' has {LengthOf(validity):N0}.");
            }

            _columns.Add(new IpcWriterColumnOf<T>(name, type, values, length, validity));
            return this;
        }
        finally
        {
            _guard.Exit();
        }
    }

    private void CheckName(string name, long length)
    {
        ArgumentException.ThrowIfNullOrEmpty(name);
        if (_columns.Exists(c => c.Name == name))
        {
            IpcThrow.Argument(nameof(name), $"A column named '{name}' was already added.");
        }

        if (_columns.Count > 0 && length != RowCount)
        {
            IpcThrow.Argument(nameof(name), $"Column '{name}' has {length:N0} rows; the columns added before have {RowCount:N0}.");
        }
    }

    // ARROW1 and padding (file), the schema message, the batches, the end-of-stream marker, and (file)
    // the footer, its length and ARROW1.
    private unsafe void WriteEntered(Stream stream, ArrowIpcFormat format)
    {
        CheckColumns();
        var holds = new List<MemoryHold>(_columns.Count * 2);
        try
        {
            foreach (IpcWriterColumn column in _columns)
            {
                column.Hold(holds);
            }

            foreach (IpcWriterColumn column in _columns)
            {
                column.CheckBatches(_batchSize);
            }

            var output = new IpcOutput(stream);
            if (format == ArrowIpcFormat.File)
            {
                output.Write(FileMagic);
            }

            output.WriteMessage(Message(SchemaHeader, Schema(), 0));
            using var scratch = new SafeArray<byte>(ScratchBytes, ScratchOptions with { HugePages = false });
            using MemoryLease<byte> scratchLease = scratch.Lease();
            var blocks = new List<(long Offset, int MetadataLength, long BodyLength)>();
            long rows = RowCount;
            for (long start = 0; start < rows; start += _batchSize)
            {
                long count = Math.Min(_batchSize, rows - start);
                blocks.Add(WriteBatch(output, start, count, (byte*)scratchLease.Pointer));
            }

            output.WriteEndOfStream();
            if (format == ArrowIpcFormat.File)
            {
                WriteFooter(output, blocks);
            }

            stream.Flush();
        }
        finally
        {
            foreach (MemoryHold hold in holds)
            {
                hold.Dispose();
            }
        }
    }

    private unsafe (long Offset, int MetadataLength, long BodyLength) WriteBatch(IpcOutput output, long start, long count, byte* scratch)
    {
        int columns = _columns.Count;
        int bufferCount = columns + _columns.Sum(c => c.ValueBuffers);
        byte[] nodes = new byte[16 * columns];
        byte[] buffers = new byte[16 * bufferCount];
        long[] validityBytes = new long[columns];
        Span<long> lengths = stackalloc long[2];
        long body = 0;
        int b = 0;
        for (int c = 0; c < columns; c++)
        {
            IpcWriterColumn column = _columns[c];
            long nulls = column.NullsIn(start, count);
            validityBytes[c] = nulls > 0 ? ValidityBitmap.BytesFor(count) : 0;
            WritePair(nodes, 2 * c, count, nulls);
            WritePair(buffers, 2 * b++, body, validityBytes[c]);
            body += Pad(validityBytes[c]);
            column.ValueBufferLengths(start, count, lengths);
            for (int v = 0; v < column.ValueBuffers; v++)
            {
                WritePair(buffers, 2 * b++, body, lengths[v]);
                body += Pad(lengths[v]);
            }
        }

        FlatObject batch = FlatObject.Table()
            .Scalar(0, 8, count)
            .Reference(1, FlatObject.Structs(nodes, columns, 8))
            .Reference(2, FlatObject.Structs(buffers, bufferCount, 8));
        (long offset, int metadataLength) = output.WriteMessage(Message(RecordBatchHeader, batch, body));
        for (int c = 0; c < columns; c++)
        {
            if (validityBytes[c] > 0)
            {
                _columns[c].WriteValidity(output, start, validityBytes[c]);
                output.Pad();
            }

            _columns[c].WriteValues(output, start, count, scratch, ScratchBytes, BigEndian);
        }

        return (offset, metadataLength, body);
    }

    // Footer: version (0), schema (1), dictionaries (2), recordBatches (3); Block: offset, metaDataLength (+4 padding), bodyLength.
    private void WriteFooter(IpcOutput output, List<(long Offset, int MetadataLength, long BodyLength)> blocks)
    {
        byte[] bytes = new byte[24 * blocks.Count];
        for (int b = 0; b < blocks.Count; b++)
        {
            Span<byte> block = bytes.AsSpan(24 * b);
            System.Buffers.Binary.BinaryPrimitives.WriteInt64LittleEndian(block, blocks[b].Offset);
            System.Buffers.Binary.BinaryPrimitives.WriteInt32LittleEndian(block[8..], blocks[b].MetadataLength);
            System.Buffers.Binary.BinaryPrimitives.WriteInt64LittleEndian(block[16..], blocks[b].BodyLength);
        }

        FlatObject footer = FlatObject.Table()
            .Scalar(0, 2, MetadataVersionV5)
            .Reference(1, Schema())
            .Reference(2, FlatObject.Structs([], 0, 8))
            .Reference(3, FlatObject.Structs(bytes, blocks.Count, 8));
        byte[] footerBytes = FlatBufferBuilder.Build(footer);
        output.Write(footerBytes);
        output.WriteInt32(footerBytes.Length);
        output.Write("ARROW1"u8);
    }

    private FlatObject Schema() =>
        IpcSchema.Write([.. _columns.Select(c => (c.Name, c.Type, c.Nullable))], BigEndian);

    // Message: version (0), header_type (1), header (2), bodyLength (3).
    private static FlatObject Message(byte headerType, FlatObject header, long bodyLength) =>
        FlatObject.Table()
            .Scalar(0, 2, MetadataVersionV5)
            .Scalar(1, 1, headerType)
            .Reference(2, header)
            .Scalar(3, 8, bodyLength);

    private static long Pad(long bytes) => (bytes + 7) & ~7L;

    private static void WritePair(byte[] target, int index, long first, long second)
    {
        System.Buffers.Binary.BinaryPrimitives.WriteInt64LittleEndian(target.AsSpan(8 * index), first);
        System.Buffers.Binary.BinaryPrimitives.WriteInt64LittleEndian(target.AsSpan(8 * (index + 1)), second);
    }
}
