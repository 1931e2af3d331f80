using jemalloc.AddOns;
using jemalloc.Arrow.Ipc;

namespace jemalloc.Arrow;

/// <summary>
/// Reads Arrow IPC files and streams into native columns: a column of every record batch is read
/// from the stream straight into one <see cref="HugeArray{T}"/> (its validity bitmaps, concatenated,
/// into another), with no Apache.Arrow array or managed copy of the body in between.
/// </summary>
/// <remarks>
/// <para>
/// Columns are read as the element type that holds their values: Int8 to UInt64 as <see cref="sbyte"/>
/// to <see cref="ulong"/>; HalfFloat, Float and Double as <see cref="Half"/>, <see cref="float"/> and
/// <see cref="double"/>; Bool (bit-packed in Arrow) as <see cref="bool"/>; Date32 and Time32 as
/// <see cref="int"/>; Date64, Timestamp, Time64 and Duration as <see cref="long"/> (their unit and time
/// zone are in <see cref="Fields"/>). Any other pairing throws <see cref="ArgumentException"/> naming the read that takes
/// the column, rather than reinterpret the values.
/// Utf8, Binary, LargeUtf8 and LargeBinary columns are read by <see cref="ReadStringColumn(string, AllocationOptions)"/>
/// into a <see cref="NativeStringColumn"/>; Decimal128 columns by <see cref="ReadDecimalColumn(string, AllocationOptions)"/>
/// into a <see cref="DecimalColumn"/>, and FixedSizeBinary columns by
/// <see cref="ReadFixedSizeBinaryColumn(string, AllocationOptions)"/> into a <see cref="FixedSizeBinaryColumn"/>.
/// Dictionary-encoded string and binary columns are read, still encoded, by
/// <see cref="ReadDictionaryColumn(string, AllocationOptions)"/> into a <see cref="NativeDictionaryColumn"/>.
/// </para>
/// <para>
/// The schema's byte order is honoured: the values of a big-endian file or stream are byte-swapped as
/// they are read, so they arrive as the same numbers (a decimal as one 16-byte integer; fixed-size
/// binary values are bytes, never swapped; dictionary indices are swapped as the integers they are).
/// Dictionary-encoded columns of other types, nested types and compressed bodies (LZ4, ZSTD) are
/// refused with <see cref="NotSupportedException"/> naming the column. The metadata is read and checked when the reader opens; every buffer is checked against
/// its batch's body before it is read, and a forged or truncated input throws
/// <see cref="InvalidDataException"/> with nothing left allocated.
/// </para>
/// <para>
/// The stream must be seekable: each column is read from every batch in turn. One thread uses an
/// instance at a time: a call (or <see cref="Dispose"/>) from another thread while one is under way
/// throws <see cref="InvalidOperationException"/> and changes nothing.
/// </para>
/// </remarks>
public sealed partial class ArrowIpcReader : IDisposable
{
    private const string TypeName = nameof(ArrowIpcReader);
    private const int ScratchBytes = 64 * 1024;

    private readonly Stream _stream;
    private readonly bool _leaveOpen;
    private readonly IpcIndex _index;
    private readonly System.Collections.ObjectModel.ReadOnlyCollection<ArrowIpcField> _fields;
    private SingleUserGuard _guard;

    /// <summary>Opens the Arrow IPC file or stream at <paramref name="path"/>, its format told by its first bytes (the file format starts with <c>ARROW1</c>).</summary>
    /// <param name="path">The path.</param>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty.</exception>
    /// <exception cref="FileNotFoundException">There is no file at <paramref name="path"/>.</exception>
    /// <exception cref="InvalidDataException">The file is not Arrow IPC, or is malformed or truncated.</exception>
    public ArrowIpcReader(string path)
        : this(leaveOpen: false, OpenFile(path), null)
    {
    }

    /// <summary>Opens the file at <paramref name="path"/> as Arrow IPC of <paramref name="format"/>.</summary>
    /// <param name="path">The path.</param>
    /// <param name="format">The file or the streaming format.</param>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="format"/> is not a format.</exception>
    /// <exception cref="FileNotFoundException">There is no file at <paramref name="path"/>.</exception>
    /// <exception cref="InvalidDataException">The file is not Arrow IPC of that format, or is malformed or truncated.</exception>
    public ArrowIpcReader(string path, ArrowIpcFormat format)
        : this(leaveOpen: false, OpenFile(path), CheckFormat(format))
    {
    }

    /// <summary>Reads Arrow IPC from <paramref name="stream"/>, its format told by its first bytes.</summary>
    /// <param name="stream">A readable, seekable stream holding one IPC file or stream from its position 0.</param>
    /// <param name="leaveOpen">Whether <see cref="Dispose"/> leaves the stream open.</param>
    /// <exception cref="ArgumentNullException"><paramref name="stream"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException"><paramref name="stream"/> cannot read or seek.</exception>
    /// <exception cref="InvalidDataException">The stream is not Arrow IPC, or is malformed or truncated.</exception>
    public ArrowIpcReader(Stream stream, bool leaveOpen = false)
        : this(leaveOpen, stream, null)
    {
    }

    /// <summary>Reads Arrow IPC of <paramref name="format"/> from <paramref name="stream"/>.</summary>
    /// <param name="stream">A readable, seekable stream holding one IPC file or stream from its position 0.</param>
    /// <param name="format">The file or the streaming format.</param>
    /// <param name="leaveOpen">Whether <see cref="Dispose"/> leaves the stream open.</param>
    /// <exception cref="ArgumentNullException"><paramref name="stream"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException"><paramref name="stream"/> cannot read or seek.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="format"/> is not a format.</exception>
    /// <exception cref="InvalidDataException">The stream is not Arrow IPC of that format, or is malformed or truncated.</exception>
    public ArrowIpcReader(Stream stream, ArrowIpcFormat format, bool leaveOpen = false)
        : this(leaveOpen, stream, CheckFormat(format))
    {
    }

    private ArrowIpcReader(bool leaveOpen, Stream stream, ArrowIpcFormat? format)
    {
        ArgumentNullException.ThrowIfNull(stream);
        _leaveOpen = leaveOpen;
        try
        {
            if (!stream.CanRead || !stream.CanSeek)
            {
                IpcThrow.Argument(nameof(stream), "The stream must be readable and seekable: the reader reads each column from every batch in turn.");
            }

            _stream = stream;
            _index = IpcIndex.Read(stream, format ?? (IpcIndex.StartsWithMagic(stream) ? ArrowIpcFormat.File : ArrowIpcFormat.Stream));
            _fields = Array.AsReadOnly(_index.Fields);
        }
        catch (Exception e) when (!leaveOpen || e is InvalidDataException)
        {
            if (!leaveOpen)
            {
                stream.Dispose();
            }

            if (e is InvalidDataException invalid && stream is FileStream file)
            {
                throw InFile(invalid, file);
            }

            throw;
        }
    }

    /// <summary>Whether the input is in the file or the streaming format.</summary>
    public ArrowIpcFormat Format => _index.Format;

    /// <summary>Whether the schema declares its data big-endian; the values are swapped to this machine's order as they are read.</summary>
    public bool IsBigEndian => _index.BigEndian;

    /// <summary>The schema's top-level columns, in order.</summary>
    public IReadOnlyList<ArrowIpcField> Fields => _fields;

    /// <summary>The number of record batches.</summary>
    public int BatchCount => _index.Batches.Count;

    /// <summary>The number of rows: the sum of the batches' lengths.</summary>
    public long RowCount => _index.RowCount;

    /// <summary>The index of the column named <paramref name="column"/> (ordinal comparison).</summary>
    /// <remarks>
    /// Arrow lets two columns share a name; a read by such a name would have to pick one silently, so it
    /// is refused instead.
    /// </remarks>
    /// <exception cref="ArgumentNullException"><paramref name="column"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException">The schema has no column of that name, or more than one.</exception>
    public int GetColumnIndex(string column)
    {
        ArgumentNullException.ThrowIfNull(column);
        ArrowIpcField[] fields = _index.Fields;
        int found = -1;
        for (int i = 0; i < fields.Length; i++)
        {
            if (fields[i].Name == column)
            {
                if (found >= 0)
                {
                    ThrowAmbiguous(column, fields);
                }

                found = i;
            }
        }

        if (found < 0)
        {
            IpcThrow.Argument(nameof(column), $"The schema has no column '{column}'; its columns are: {string.Join(", ", fields.Select(f => f.Name))}.");
        }

        return found;
    }

    private static void ThrowAmbiguous(string column, ArrowIpcField[] fields)
    {
        int[] positions = [.. Enumerable.Range(0, fields.Length).Where(i => fields[i].Name == column)];
        IpcThrow.Argument(nameof(column), $"The schema has {positions.Length} columns named '{column}' (at positions {string.Join(", ", positions)}); a read by that name cannot tell which is meant.");
    }

    /// <summary>Reads a column that has no nulls into a new native array, with the library's default options (huge pages from 2 MiB).</summary>
    /// <inheritdoc cref="ReadColumn{T}(string, AllocationOptions)"/>
    public HugeArray<T> ReadColumn<T>(string column)
        where T : unmanaged, IEquatable<T>
    {
        (HugeArray<T> values, _) = Read<T>(column, null, withValidity: false);
        return values;
    }

    /// <summary>Reads a column that has no nulls, from every batch, into a new native array allocated with <paramref name="options"/>.</summary>
    /// <typeparam name="T">The element type that holds the column's values (see the class remarks).</typeparam>
    /// <param name="column">The column's name.</param>
    /// <param name="options">How the array (and the reader's small scratch block) is allocated.</param>
    /// <returns>A new array of <see cref="RowCount"/> elements, which the caller owns.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="column"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException">The schema has no column of that name, or more than one; the column is of a type another read takes (strings, decimals, fixed-size binary, dictionary-encoded strings: the message names the read), or its values are not of type <typeparamref name="T"/>; or <paramref name="options"/> cannot be used.</exception>
    /// <exception cref="NotSupportedException">The column is of a type no read takes (nested, a view, Decimal256, dictionary-encoded values other than strings and binary); a batch is compressed; or a column before it has a type whose buffers cannot be counted.</exception>
    /// <exception cref="InvalidOperationException">The input has no rows (an array has at least one element), or the column has nulls (read it with the overload that gives a validity bitmap); or another thread is using the reader.</exception>
    /// <exception cref="InvalidDataException">A batch's node or buffers for the column do not fit the batch or its body, or the input is shorter than its metadata says.</exception>
    /// <exception cref="OutOfMemoryException">The array cannot be allocated.</exception>
    /// <exception cref="IOException">The stream cannot be read.</exception>
    /// <exception cref="ObjectDisposedException">The reader was disposed.</exception>
    public HugeArray<T> ReadColumn<T>(string column, AllocationOptions options)
        where T : unmanaged, IEquatable<T>
    {
        (HugeArray<T> values, _) = Read<T>(column, options, withValidity: false);
        return values;
    }

    /// <summary>Reads a column, nulls included, from every batch into new native values and a validity bitmap, both allocated with <paramref name="options"/>.</summary>
    /// <typeparam name="T">The element type that holds the column's values (see the class remarks).</typeparam>
    /// <param name="column">The column's name.</param>
    /// <param name="options">How the arrays (and the reader's small scratch block) are allocated.</param>
    /// <param name="validity">The new bitmap in Arrow's layout: bit <c>i % 8</c> of byte <c>i / 8</c> is set when row <c>i</c> has a value; the batches' bitmaps are concatenated at each batch's first row. The caller owns it.</param>
    /// <returns>The new values (a null row holds whatever the input held there), which the caller owns.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="column"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException">The schema has no column of that name, or more than one; the column is of a type another read takes (strings, decimals, fixed-size binary, dictionary-encoded strings: the message names the read), or its values are not of type <typeparamref name="T"/>; or <paramref name="options"/> cannot be used.</exception>
    /// <exception cref="NotSupportedException">The column is of a type no read takes (nested, a view, Decimal256, dictionary-encoded values other than strings and binary); a batch is compressed; or a column before it has a type whose buffers cannot be counted.</exception>
    /// <exception cref="InvalidOperationException">The input has no rows, or another thread is using the reader.</exception>
    /// <exception cref="InvalidDataException">A batch's node or buffers for the column do not fit the batch or its body, or the input is shorter than its metadata says.</exception>
    /// <exception cref="OutOfMemoryException">The arrays cannot be allocated.</exception>
    /// <exception cref="IOException">The stream cannot be read.</exception>
    /// <exception cref="ObjectDisposedException">The reader was disposed.</exception>
    public HugeArray<T> ReadColumn<T>(string column, AllocationOptions options, out HugeArray<byte> validity)
        where T : unmanaged, IEquatable<T>
    {
        (HugeArray<T> values, HugeArray<byte>? bits) = Read<T>(column, options, withValidity: true);
        validity = bits!;
        return values;
    }

    /// <summary>Reads a Utf8, Binary, LargeUtf8 or LargeBinary column, nulls included, with the library's default options.</summary>
    /// <inheritdoc cref="ReadStringColumn(string, AllocationOptions)"/>
    public NativeStringColumn ReadStringColumn(string column) => ReadStringColumn(column, AllocationOptions.Default);

    /// <summary>
    /// Reads a Utf8, Binary, LargeUtf8 or LargeBinary column of every batch into a new
    /// <see cref="NativeStringColumn"/>: its values' bytes into one data block, its offsets (widened to
    /// 64 bits, each batch's moved to follow the one before) into another, and its validity bitmaps,
    /// when it has nulls, into a third, all allocated with <paramref name="options"/>.
    /// </summary>
    /// <param name="column">The column's name.</param>
    /// <param name="options">How the blocks (and the reader's small scratch block) are allocated.</param>
    /// <returns>A new column of <see cref="RowCount"/> rows (UTF-8 for Utf8 and LargeUtf8; an input without rows gives a column of none), which the caller owns; its <see cref="NativeStringColumn.Validity"/> is <see langword="null"/> when no row is null.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="column"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException">The schema has no column of that name or more than one; the column is of a type another read takes (the message names it); or <paramref name="options"/> cannot be used.</exception>
    /// <exception cref="NotSupportedException">The column is of a type no read takes (nested, a view, Decimal256, dictionary-encoded values other than strings and binary); a batch is compressed; or a column before it has a type whose buffers cannot be counted.</exception>
    /// <exception cref="InvalidOperationException">Another thread is using the reader.</exception>
    /// <exception cref="InvalidDataException">A batch's node or buffers for the column do not fit the batch or its body, or its offsets do not ascend inside its data buffer.</exception>
    /// <exception cref="OutOfMemoryException">The blocks cannot be allocated.</exception>
    /// <exception cref="IOException">The stream cannot be read.</exception>
    /// <exception cref="ObjectDisposedException">The reader was disposed.</exception>
    public NativeStringColumn ReadStringColumn(string column, AllocationOptions options) =>
        ReadGuarded(column, index => ReadStringsEntered(index, column, options));

    /// <summary>Closes the stream (unless the reader was made to leave it open). Disposing again does nothing.</summary>
    /// <exception cref="InvalidOperationException">Another thread is reading: the reader stays open; dispose it once that read has returned.</exception>
    public void Dispose()
    {
        if (_guard.TryDispose(TypeName) && !_leaveOpen)
        {
            _stream.Dispose();
        }
    }

    // A file's reader names the file in what it finds wrong with it.
    private static InvalidDataException InFile(InvalidDataException e, FileStream? file) =>
        file is null ? e : new InvalidDataException($"{e.Message} (file '{file.Name}')", e);

    private static FileStream OpenFile(string path)
    {
        ArgumentException.ThrowIfNullOrEmpty(path);
        if (!File.Exists(path))
        {
            throw new FileNotFoundException($"There is no Arrow IPC file at '{path}'.", path);
        }

        // No FileStream buffer: bodies are read into native memory in large reads, and the metadata is small.
        return new FileStream(path, FileMode.Open, FileAccess.Read, FileShare.Read, bufferSize: 0, FileOptions.RandomAccess);
    }

    private static ArrowIpcFormat CheckFormat(ArrowIpcFormat format)
    {
        if (format is not (ArrowIpcFormat.File or ArrowIpcFormat.Stream))
        {
            throw new ArgumentOutOfRangeException(nameof(format), format, "The formats are File and Stream.");
        }

        return format;
    }

    private (HugeArray<T> Values, HugeArray<byte>? Validity) Read<T>(string column, AllocationOptions? options, bool withValidity)
        where T : unmanaged, IEquatable<T>
    {
        int index = GetColumnIndex(column);
        _guard.Enter(TypeName);
        try
        {
            return ReadEntered<T>(index, column, options, withValidity);
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

    private unsafe (HugeArray<T> Values, HugeArray<byte>? Validity) ReadEntered<T>(int index, string column, AllocationOptions? options, bool withValidity)
        where T : unmanaged, IEquatable<T>
    {
        ArrowIpcField field = _index.Fields[index];
        CheckReadable<T>(field, column);
        var read = new IpcColumnRead(_stream, _index, index);
        (long rows, long nulls) = read.Check(valueBuffers: 1, elementBits: typeof(T) == typeof(bool) ? 1 : sizeof(T) * 8);
        if (rows == 0)
        {
            IpcThrow.InvalidOperation($"The input has no rows, so column '{column}' cannot be read into an array (an array has at least one element).");
        }

        if (!withValidity && nulls > 0)
        {
            IpcThrow.InvalidOperation($"Column '{column}' has {nulls:N0} nulls; read it with the overload that returns a validity bitmap.");
        }

        AllocationOptions chosen = options ?? HugePagePolicy.DefaultFor<T>(rows);
        var values = new HugeArray<T>(rows, chosen);
        HugeArray<byte>? validity = null;
        try
        {
            using var scratch = new SafeArray<byte>(ScratchBytes, chosen with { HugePages = false });
            using MemoryLease<byte> scratchLease = scratch.Lease();
            using (MemoryLease<T> valueLease = values.Lease())
            {
                read.ReadValues((T*)valueLease.Pointer, (byte*)scratchLease.Pointer);
            }

            if (withValidity)
            {
                validity = new HugeArray<byte>(ValidityBitmap.BytesFor(rows), chosen);
                using MemoryLease<byte> bitsLease = validity.Lease();
                read.ReadValidity((byte*)bitsLease.Pointer, (byte*)scratchLease.Pointer);
            }

            return (values, validity);
        }
        catch
        {
            values.Dispose();
            validity?.Dispose();
            throw;
        }
    }

    private NativeStringColumn ReadStringsEntered(int index, string column, AllocationOptions options)
    {
        ArrowIpcField field = _index.Fields[index];
        if (field.IsDictionaryEncoded || !field.IpcType.IsVariableBinary)
        {
            ThrowWrongRead(field, column, "ReadStringColumn");
        }

        return ReadStrings(_index, index, options);
    }

    // The strings of column `index` of `source`: the input's record batches, or one dictionary's batches.
    private NativeStringColumn ReadStrings(IpcIndex source, int index, AllocationOptions options)
    {
        (HugeArray<long> offsets, HugeArray<byte> data, HugeArray<byte>? validity, long rows) = ReadStringParts(source, index, options);
        ArrowIpcType type = source.Fields[index].Type;
        return new NativeStringColumn(offsets, data, validity, rows, isUtf8: type is ArrowIpcType.Utf8 or ArrowIpcType.LargeUtf8);
    }

    // The blocks of a string column, which the caller owns: offsets, data, and validity when it has nulls.
    private unsafe (HugeArray<long> Offsets, HugeArray<byte> Data, HugeArray<byte>? Validity, long Rows) ReadStringParts(IpcIndex source, int index, AllocationOptions options)
    {
        ArrowIpcField field = source.Fields[index];
        bool large = field.Type is ArrowIpcType.LargeUtf8 or ArrowIpcType.LargeBinary;
        var read = new IpcColumnRead(_stream, source, index);
        (long rows, long nulls) = read.Check(valueBuffers: 2, elementBits: large ? 64 : 32);
        using var scratch = new SafeArray<byte>(ScratchBytes, options with { HugePages = false });
        using MemoryLease<byte> scratchLease = scratch.Lease();
        byte* scratchPointer = (byte*)scratchLease.Pointer;
        (long[] extents, long bytes) = IpcStringRead.Extents(read, large, scratchPointer);
        HugeArray<long>? offsets = null;
        HugeArray<byte>? data = null;
        HugeArray<byte>? validity = null;
        try
        {
            offsets = new HugeArray<long>(rows + 1, options);
            data = new HugeArray<byte>(Math.Max(1, bytes), options);
            using (MemoryLease<long> offsetLease = offsets.Lease())
            using (MemoryLease<byte> dataLease = data.Lease())
            {
                IpcStringRead.Read(read, large, extents, (long*)offsetLease.Pointer, (byte*)dataLease.Pointer, scratchPointer);
            }

            if (nulls > 0)
            {
                validity = new HugeArray<byte>(ValidityBitmap.BytesFor(rows), options);
                using MemoryLease<byte> bitsLease = validity.Lease();
                read.ReadValidity((byte*)bitsLease.Pointer, scratchPointer);
            }

            return (offsets, data, validity, rows);
        }
        catch
        {
            offsets?.Dispose();
            data?.Dispose();
            validity?.Dispose();
            throw;
        }
    }

    private static void CheckReadable<T>(ArrowIpcField field, string column)
    {
        Type? element = field.IsDictionaryEncoded ? null : field.IpcType.ElementType;
        if (element is null)
        {
            ThrowWrongRead(field, column, $"ReadColumn<{typeof(T).Name}>");
        }

        if (element != typeof(T))
        {
            IpcThrow.Argument(nameof(column), $"Column '{column}' holds {field.TypeName} values, read as {element.Name}, not {typeof(T).Name}.");
        }
    }

    // The read that takes a column of this type, or null for a type no read takes.
    private static string? ReadFor(ArrowIpcField field)
    {
        IpcType type = field.IpcType;
        if (field.IsDictionaryEncoded)
        {
            return type.IsVariableBinary ? "ReadDictionaryColumn" : null;
        }

        return type.ElementType is Type element ? $"ReadColumn<{element.Name}>"
            : type.IsVariableBinary ? "ReadStringColumn"
            : field.Type == ArrowIpcType.Decimal128 ? "ReadDecimalColumn"
            : field.Type == ArrowIpcType.FixedSizeBinary ? "ReadFixedSizeBinaryColumn"
            : null;
    }

    // A column read by a method that does not take its type: the caller's mistake (ArgumentException
    // naming the read that does) when another read takes it, NotSupportedException when none does.
    [System.Diagnostics.CodeAnalysis.DoesNotReturn]
    private static void ThrowWrongRead(ArrowIpcField field, string column, string read)
    {
        string described = field.IsDictionaryEncoded ? $"dictionary-encoded ({field.TypeName} values)" : $"of type {field.TypeName}";
        if (ReadFor(field) is string right)
        {
            IpcThrow.Argument(nameof(column), $"Column '{column}' is {described}, which {read} does not read: read it with {right}.");
        }

        IpcThrow.NotSupported(field.IsDictionaryEncoded
            ? $"Column '{column}' is {described}: the reader reads dictionary-encoded strings and binary (ReadDictionaryColumn), not dictionary-encoded {field.TypeName}."
            : $"Column '{column}' is {described}, a type the reader does not read (by {read} or any other read).");
    }
}
