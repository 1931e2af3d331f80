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
/// <see cref="InvalidOperationException"/> and changes nothing. After <see cref="Build"/> the builder is
/// empty and may build another column. Disposing it frees whatever was appended and not built.
/// </remarks>
public sealed class NativeStringColumnBuilder : IDisposable, IWriterGuarded
{
    private const string TypeName = nameof(NativeStringColumnBuilder);
    private const int InitialRows = 1024;
    private const int InitialBytes = 16 * 1024;

    private readonly AllocationOptions? _options;
    private NativeBufferWriter<long> _offsets;
    private NativeBufferWriter<byte> _data;
    private NativeBufferWriter<byte> _validity;
    private SingleWriterGuard _guard;
    private long _count;
    private long _byteCount;
    private long _nullCount;
    // The validity bits of the rows after the last whole byte written to _validity.
    private int _pendingBits;
    private int _disposed;

    /// <summary>Creates an empty builder of a UTF-8 text column whose blocks are allocated as the library chooses for their size.</summary>
    public NativeStringColumnBuilder()
        : this(isUtf8: true)
    {
    }

    /// <summary>Creates an empty builder whose blocks are allocated as the library chooses for their size.</summary>
    /// <param name="isUtf8">Whether the values are UTF-8 text rather than binary.</param>
    public NativeStringColumnBuilder(bool isUtf8)
    {
        IsUtf8 = isUtf8;
        (_offsets, _data, _validity) = NewWriters(null);
    }

    /// <summary>Creates an empty builder whose blocks are allocated with <paramref name="options"/> (an arena, huge pages).</summary>
    /// <param name="isUtf8">Whether the values are UTF-8 text rather than binary.</param>
    /// <param name="options">How the blocks are allocated.</param>
    /// <exception cref="ArgumentException"><paramref name="options"/> cannot be used.</exception>
    /// <exception cref="ObjectDisposedException"><paramref name="options"/> name an arena that was destroyed.</exception>
    public NativeStringColumnBuilder(bool isUtf8, AllocationOptions options)
    {
        IsUtf8 = isUtf8;
        _options = options;
        (_offsets, _data, _validity) = NewWriters(options);
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
    /// <exception cref="OutOfMemoryException">The blocks cannot grow.</exception>
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
    /// <exception cref="ArgumentException">The string holds a lone surrogate (it has no UTF-8 form).</exception>
    /// <inheritdoc cref="Append(ReadOnlySpan{byte})"/>
    public void Append(string? value)
    {
        if (value is null)
        {
            AppendNull();
            return;
        }

        _guard.Enter(this, TypeName);
        try
        {
            AppendRow(default, value, valid: true);
        }
        finally
        {
            _guard.Exit();
        }
    }

    /// <summary>Appends a null row.</summary>
    /// <exception cref="ObjectDisposedException">The builder was disposed.</exception>
    /// <exception cref="InvalidOperationException">Another thread is using the builder.</exception>
    /// <exception cref="OutOfMemoryException">The blocks cannot grow.</exception>
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
    /// builder starts again empty.
    /// </summary>
    /// <returns>The column, which the caller owns.</returns>
    /// <exception cref="ObjectDisposedException">The builder was disposed.</exception>
    /// <exception cref="InvalidOperationException">Another thread is using the builder.</exception>
    /// <exception cref="OutOfMemoryException">A block cannot be shrunk, or the next column's blocks cannot be allocated; the rows are lost and the builder is empty.</exception>
    public NativeStringColumn Build()
    {
        _guard.Enter(this, TypeName);
        HugeArray<long>? offsets = null;
        HugeArray<byte>? data = null;
        HugeArray<byte>? validity = null;
        try
        {
            if (_count % 8 != 0)
            {
                _validity.GetSpan(1)[0] = (byte)_pendingBits;
                _validity.Advance(1);
            }

            if (_byteCount == 0)
            {
                // An array has at least one element; the column's offsets say none of it is a value.
                _data.GetSpan(1)[0] = 0;
                _data.Advance(1);
            }

            offsets = _offsets.DetachToHugeArray();
            data = _data.DetachToHugeArray();
            validity = _nullCount > 0 ? _validity.DetachToHugeArray() : null;
            var column = new NativeStringColumn(offsets, data, validity, _count, IsUtf8);
            offsets = null;
            data = null;
            validity = null;
            return column;
        }
        finally
        {
            offsets?.Dispose();
            data?.Dispose();
            validity?.Dispose();
            Restart();
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
            _offsets.Dispose();
            _data.Dispose();
            _validity.Dispose();
        }
        finally
        {
            _guard.Exit();
        }
    }

    private static (NativeBufferWriter<long>, NativeBufferWriter<byte>, NativeBufferWriter<byte>) NewWriters(AllocationOptions? options)
    {
        NativeBufferWriter<long>? offsets = null;
        NativeBufferWriter<byte>? data = null;
        try
        {
            offsets = options is { } chosen ? new NativeBufferWriter<long>(InitialRows, chosen) : new NativeBufferWriter<long>(InitialRows);
            offsets.GetSpan(1)[0] = 0;
            offsets.Advance(1);
            data = options is { } given ? new NativeBufferWriter<byte>(InitialBytes, given) : new NativeBufferWriter<byte>(InitialBytes);
            NativeBufferWriter<byte> validity = options is { } bits ? new NativeBufferWriter<byte>(InitialRows / 8, bits) : new NativeBufferWriter<byte>(InitialRows / 8);
            return (offsets, data, validity);
        }
        catch
        {
            offsets?.Dispose();
            data?.Dispose();
            throw;
        }
    }

    // Room for the row's offset and (at a byte's last row) its validity byte is taken before its bytes
    // are written, so a failure to grow (or a string with no UTF-8 form) leaves the builder as it was.
    private void AppendRow(ReadOnlySpan<byte> bytes, string? text, bool valid)
    {
        Span<long> offsetSlot = _offsets.GetSpan(1);
        int bit = (int)(_count & 7);
        Span<byte> bitSlot = bit == 7 ? _validity.GetSpan(1) : default;
        int written = 0;
        if (text is not null)
        {
            if (text.Length > 0)
            {
                // Strict: a lone surrogate is refused rather than stored as U+FFFD, which would not read back as the string given.
                written = Utf8Strict.GetBytes(text, _data.GetSpan(Encoding.UTF8.GetMaxByteCount(text.Length)));
                _data.Advance(written);
            }
        }
        else if (!bytes.IsEmpty)
        {
            bytes.CopyTo(_data.GetSpan(bytes.Length));
            _data.Advance(bytes.Length);
            written = bytes.Length;
        }

        _byteCount += written;
        offsetSlot[0] = _byteCount;
        _offsets.Advance(1);
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
            _validity.Advance(1);
            _pendingBits = 0;
        }

        Volatile.Write(ref _count, _count + 1);
    }

    // After a build (or a failed one): fresh, empty writers, so no block of the built column is reachable from here.
    private void Restart()
    {
        _offsets.Dispose();
        _data.Dispose();
        _validity.Dispose();
        _count = 0;
        _byteCount = 0;
        _nullCount = 0;
        _pendingBits = 0;
        (_offsets, _data, _validity) = NewWriters(_options);
    }
}
