using System.Text;
using jemalloc.Columns;
using jemalloc.Internal;

namespace jemalloc;

/// <summary>
/// Builds a <see cref="NativeStringColumn"/> a value at a time: the bytes, offsets and validity bits go
/// into growing native blocks, which <see cref="Build"/> hands to the column without a copy.
/// </summary>
/// <remarks>
/// One thread uses a builder at a time: a call from a second thread while one is under way throws
/// <see cref="InvalidOperationException"/> and changes nothing. After <see cref="Build"/> (or a failed
/// one) the builder is empty and may build another column. The blocks are allocated at the first append;
/// in an arena, a builder holding appended rows holds off the arena's reset until it builds or is
/// disposed. Disposing it frees whatever was appended and not built.
/// </remarks>
public sealed class NativeStringColumnBuilder : IDisposable, IWriterGuarded
{
    private const string TypeName = nameof(NativeStringColumnBuilder);

    private readonly AllocationOptions? _options;
    private StringBlocks? _blocks;
    private SingleWriterGuard _guard;
    private long _count;
    private long _byteCount;
    private int _disposed;

    /// <summary>Creates an empty builder of a UTF-8 text column whose blocks are allocated as the library chooses for their size.</summary>
    public NativeStringColumnBuilder()
        : this(isUtf8: true)
    {
    }

    /// <summary>Creates an empty builder whose blocks are allocated as the library chooses for their size.</summary>
    /// <param name="isUtf8">Whether the values are UTF-8 text rather than binary.</param>
    public NativeStringColumnBuilder(bool isUtf8) => IsUtf8 = isUtf8;

    /// <summary>Creates an empty builder whose blocks are allocated with <paramref name="options"/> (an arena, huge pages) from the first append.</summary>
    /// <param name="isUtf8">Whether the values are UTF-8 text rather than binary.</param>
    /// <param name="options">How the blocks are allocated.</param>
    public NativeStringColumnBuilder(bool isUtf8, AllocationOptions options)
    {
        IsUtf8 = isUtf8;
        _options = options;
    }

    /// <summary>Whether the column will hold UTF-8 text rather than binary.</summary>
    public bool IsUtf8 { get; }

    /// <summary>The rows appended since the builder was made or last built.</summary>
    public long Count => Volatile.Read(ref _count);

    /// <summary>The value bytes appended since the builder was made or last built.</summary>
    public long ByteCount => Volatile.Read(ref _byteCount);

    bool IWriterGuarded.IsDisposed => Volatile.Read(ref _disposed) != 0;

    /// <summary>Appends a value.</summary>
    /// <param name="value">Its bytes (UTF-8 for a text column; not checked).</param>
    /// <exception cref="ObjectDisposedException">The builder was disposed.</exception>
    /// <exception cref="InvalidOperationException">Another thread is using the builder.</exception>
    /// <exception cref="OutOfMemoryException">The blocks cannot grow (or <see cref="ArenaBudgetExceededException"/> in an arena); the builder is unchanged.</exception>
    public void Append(ReadOnlySpan<byte> value)
    {
        _guard.Enter(this, TypeName);
        try
        {
            AppendRow(value, null, valid: true);
        }
        finally
        {
            _guard.Exit();
        }
    }

    /// <summary>Appends a string as UTF-8, or a null row for <see langword="null"/>.</summary>
    /// <exception cref="ArgumentException">The string holds a lone surrogate (it has no UTF-8 form); the builder is unchanged.</exception>
    /// <inheritdoc cref="Append(ReadOnlySpan{byte})"/>
    public void Append(string? value)
    {
        _guard.Enter(this, TypeName);
        try
        {
            AppendRow(default, value, valid: value is not null);
        }
        finally
        {
            _guard.Exit();
        }
    }

    /// <summary>Appends a null row.</summary>
    /// <exception cref="ObjectDisposedException">The builder was disposed.</exception>
    /// <exception cref="InvalidOperationException">Another thread is using the builder.</exception>
    /// <exception cref="OutOfMemoryException">The blocks cannot grow; the builder is unchanged.</exception>
    public void AppendNull()
    {
        _guard.Enter(this, TypeName);
        try
        {
            AppendRow(default, null, valid: false);
        }
        finally
        {
            _guard.Exit();
        }
    }

    /// <summary>
    /// Hands the appended rows to a new column without copying them (the blocks are shrunk to what was
    /// appended, in place where jemalloc can); the column has no validity bitmap if no row is null. The
    /// builder starts again empty, whether the build succeeds or not.
    /// </summary>
    /// <returns>The column, which the caller owns.</returns>
    /// <exception cref="ObjectDisposedException">The builder was disposed.</exception>
    /// <exception cref="InvalidOperationException">Another thread is using the builder.</exception>
    /// <exception cref="OutOfMemoryException">A block cannot be shrunk or allocated; the rows are freed and the builder is empty.</exception>
    public NativeStringColumn Build()
    {
        _guard.Enter(this, TypeName);
        try
        {
            StringBlocks blocks = _blocks ?? new StringBlocks(_options);
            _blocks = null;
            using (blocks)
            {
                return blocks.Build(_count, IsUtf8);
            }
        }
        finally
        {
            _count = 0;
            _byteCount = 0;
            _guard.Exit();
        }
    }

    /// <summary>Frees what was appended and not built. Disposing again does nothing.</summary>
    /// <exception cref="InvalidOperationException">Another thread is using the builder.</exception>
    public void Dispose()
    {
        if (Volatile.Read(ref _disposed) != 0)
        {
            return;
        }

        _guard.Enter(this, TypeName);
        try
        {
            Volatile.Write(ref _disposed, 1);
            _blocks?.Dispose();
            _blocks = null;
        }
        finally
        {
            _guard.Exit();
        }
    }

    // Room for the row's offset and (at a byte's last row) its validity byte is taken before its bytes
    // are written, so a failure to grow (or a string with no UTF-8 form) leaves the builder as it was.
    private void AppendRow(ReadOnlySpan<byte> bytes, string? text, bool valid)
    {
        StringBlocks blocks = _blocks ??= new StringBlocks(_options);
        Span<long> offsetSlot = blocks.Offsets.GetSpan(1);
        int bit = (int)(_count & 7);
        Span<byte> bitSlot = bit == 7 ? blocks.Validity.GetSpan(1) : default;
        int written = 0;
        if (text is not null)
        {
            if (text.Length > 0)
            {
                // Strict: a lone surrogate is refused rather than stored as U+FFFD, which would not read back as the string given.
                written = Utf8Strict.GetBytes(text, blocks.Data.GetSpan(Encoding.UTF8.GetMaxByteCount(text.Length)));
                blocks.Data.Advance(written);
            }
        }
        else if (!bytes.IsEmpty)
        {
            bytes.CopyTo(blocks.Data.GetSpan(bytes.Length));
            blocks.Data.Advance(bytes.Length);
            written = bytes.Length;
        }

        _byteCount += written;
        offsetSlot[0] = _byteCount;
        blocks.Offsets.Advance(1);
        blocks.EndRow(bit, valid, bitSlot);
        Volatile.Write(ref _count, _count + 1);
    }

    /// <summary>The growing blocks of the rows appended so far: offsets (the first, 0, written at the start), bytes and validity bits.</summary>
    private sealed class StringBlocks : IDisposable
    {
        private const int InitialRows = 1024;
        private const int InitialBytes = 16 * 1024;

        // The validity bits of the rows after the last whole byte written to Validity.
        private int _pendingBits;
        private long _nullCount;

        internal StringBlocks(AllocationOptions? options)
        {
            try
            {
                Offsets = options is { } a ? new NativeBufferWriter<long>(InitialRows, a) : new NativeBufferWriter<long>(InitialRows);
                Data = options is { } b ? new NativeBufferWriter<byte>(InitialBytes, b) : new NativeBufferWriter<byte>(InitialBytes);
                Validity = options is { } c ? new NativeBufferWriter<byte>(InitialRows / 8, c) : new NativeBufferWriter<byte>(InitialRows / 8);
                Offsets.GetSpan(1)[0] = 0;
                Offsets.Advance(1);
            }
            catch
            {
                Dispose();
                throw;
            }
        }

        internal NativeBufferWriter<long> Offsets { get; } = null!;

        internal NativeBufferWriter<byte> Data { get; } = null!;

        internal NativeBufferWriter<byte> Validity { get; } = null!;

        // Records a row's validity; bitSlot is the room taken for the byte when bit is its last.
        internal void EndRow(int bit, bool valid, Span<byte> bitSlot)
        {
            if (valid)
            {
                _pendingBits |= 1 << bit;
            }
            else
            {
                _nullCount++;
            }

            if (bit == 7)
            {
                bitSlot[0] = (byte)_pendingBits;
                Validity.Advance(1);
                _pendingBits = 0;
            }
        }

        // Hands the blocks to a column of `rows` rows; whatever is not handed over is freed by Dispose.
        internal NativeStringColumn Build(long rows, bool isUtf8)
        {
            if (rows % 8 != 0)
            {
                Validity.GetSpan(1)[0] = (byte)_pendingBits;
                Validity.Advance(1);
            }

            if (Data.WrittenCount == 0)
            {
                // An array has at least one element; the column's offsets say none of it is a value.
                Data.GetSpan(1)[0] = 0;
                Data.Advance(1);
            }

            HugeArray<long>? offsets = null;
            HugeArray<byte>? data = null;
            HugeArray<byte>? validity = null;
            try
            {
                offsets = Offsets.DetachToHugeArray();
                data = Data.DetachToHugeArray();
                validity = _nullCount > 0 ? Validity.DetachToHugeArray() : null;
                return new NativeStringColumn(offsets, data, validity, rows, isUtf8);
            }
            catch
            {
                offsets?.Dispose();
                data?.Dispose();
                validity?.Dispose();
                throw;
            }
        }

        public void Dispose()
        {
            Offsets?.Dispose();
            Data?.Dispose();
            Validity?.Dispose();
        }
    }
}
