using System.Text;
using jemalloc.Columns;
using jemalloc.Internal;

namespace jemalloc;

/// <summary>
/// Builds a <see cref="NativeDictionaryColumn"/> a value at a time: each distinct value is stored once in
/// the dictionary (found again through a hash table in native memory, with no managed object per value),
/// and each row gets its value's 32-bit index. <see cref="Build"/> hands the blocks to the column without
/// a copy.
/// </summary>
/// <remarks>
/// One thread uses a builder at a time: a call from a second thread while one is under way throws
/// <see cref="InvalidOperationException"/> and changes nothing. After <see cref="Build"/> (or a failed
/// one) the builder is empty and may build another column. The blocks are allocated at the first append.
/// Disposing the builder frees whatever was appended and not built. A dictionary holds at most 2^30
/// distinct values; a column with more is a <see cref="NativeStringColumn"/>'s business.
/// </remarks>
public sealed class NativeDictionaryColumnBuilder : IDisposable, IWriterGuarded
{
    private const string TypeName = nameof(NativeDictionaryColumnBuilder);

    private readonly AllocationOptions? _options;
    private readonly long _capacity;
    private DictionaryBlocks? _blocks;
    private SingleWriterGuard _guard;
    private int _disposed;

    /// <summary>Creates an empty builder of a UTF-8 text column whose blocks are allocated as the library chooses for their size.</summary>
    public NativeDictionaryColumnBuilder()
        : this(isUtf8: true)
    {
    }

    /// <summary>Creates an empty builder whose blocks are allocated as the library chooses for their size.</summary>
    /// <param name="isUtf8">Whether the values are UTF-8 text rather than binary.</param>
    public NativeDictionaryColumnBuilder(bool isUtf8) => IsUtf8 = isUtf8;

    /// <summary>Creates an empty builder whose blocks are allocated with <paramref name="options"/> (an arena, huge pages) from the first append.</summary>
    /// <param name="isUtf8">Whether the values are UTF-8 text rather than binary.</param>
    /// <param name="options">How the blocks are allocated.</param>
    public NativeDictionaryColumnBuilder(bool isUtf8, AllocationOptions options)
    {
        IsUtf8 = isUtf8;
        _options = options;
    }

    /// <summary>Creates an empty builder whose blocks are allocated as the library chooses for their size, with room for <paramref name="capacity"/> rows (as <see cref="NativeDictionaryColumnBuilder(bool, AllocationOptions, long)"/>).</summary>
    /// <param name="isUtf8">Whether the values are UTF-8 text rather than binary.</param>
    /// <param name="capacity">The rows expected; more may be appended.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="capacity"/> is negative.</exception>
    public NativeDictionaryColumnBuilder(bool isUtf8, long capacity)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(capacity);
        IsUtf8 = isUtf8;
        _capacity = capacity;
    }

    /// <summary>
    /// Creates an empty builder whose blocks are allocated with <paramref name="options"/> from the first
    /// append, the indices' and the bitmap's with room for <paramref name="capacity"/> rows: a builder
    /// that knows its row count spares the growths (each of which copies the indices so far). Room that is
    /// never written is not touched, and a build shrinks the blocks to the rows appended.
    /// </summary>
    /// <param name="isUtf8">Whether the values are UTF-8 text rather than binary.</param>
    /// <param name="options">How the blocks are allocated.</param>
    /// <param name="capacity">The rows expected; more may be appended.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="capacity"/> is negative.</exception>
    public NativeDictionaryColumnBuilder(bool isUtf8, AllocationOptions options, long capacity)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(capacity);
        IsUtf8 = isUtf8;
        _options = options;
        _capacity = capacity;
    }

    /// <summary>The most distinct values a dictionary built here holds: 2^30.</summary>
    public const int MaxDistinctCount = DictionaryTable.MaxEntries;

    /// <summary>Whether the column will hold UTF-8 text rather than binary.</summary>
    public bool IsUtf8 { get; }

    /// <summary>The rows appended since the builder was made or last built.</summary>
    public long Count => Volatile.Read(ref _blocks) is { } blocks ? blocks.Rows : 0;

    /// <summary>The distinct values appended since the builder was made or last built.</summary>
    public int DistinctCount => Volatile.Read(ref _blocks) is { } blocks ? blocks.Table.Count : 0;

    bool IWriterGuarded.IsDisposed => Volatile.Read(ref _disposed) != 0;

    /// <summary>Appends a value.</summary>
    /// <param name="value">Its bytes (UTF-8 for a text column; not checked).</param>
    /// <exception cref="ObjectDisposedException">The builder was disposed.</exception>
    /// <exception cref="InvalidOperationException">Another thread is using the builder, or the value would be one more distinct value than <see cref="MaxDistinctCount"/>; the builder is unchanged.</exception>
    /// <exception cref="OutOfMemoryException">The blocks cannot grow (or <see cref="ArenaBudgetExceededException"/> in an arena); the builder is unchanged.</exception>
    public void Append(ReadOnlySpan<byte> value)
    {
        _guard.Enter(this, TypeName);
        try
        {
            DictionaryBlocks blocks = Blocks();
            blocks.MakeRoom();
            blocks.Append(blocks.Table.GetOrAdd(value), valid: true);
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
        if (value is null)
        {
            AppendNull();
            return;
        }

        byte[] rented = System.Buffers.ArrayPool<byte>.Shared.Rent(Encoding.UTF8.GetMaxByteCount(value.Length));
        try
        {
            // Strict: a lone surrogate is refused rather than stored as U+FFFD, which would not read back as the string given.
            int length = Utf8Strict.GetBytes(value, rented);
            Append(rented.AsSpan(0, length));
        }
        finally
        {
            System.Buffers.ArrayPool<byte>.Shared.Return(rented);
        }
    }

    /// <summary>Appends a null row (its index is 0, as Arrow writers give null rows).</summary>
    /// <exception cref="ObjectDisposedException">The builder was disposed.</exception>
    /// <exception cref="InvalidOperationException">Another thread is using the builder.</exception>
    /// <exception cref="OutOfMemoryException">The blocks cannot grow; the builder is unchanged.</exception>
    public void AppendNull()
    {
        _guard.Enter(this, TypeName);
        try
        {
            DictionaryBlocks blocks = Blocks();
            blocks.MakeRoom();
            blocks.Append(0, valid: false);
        }
        finally
        {
            _guard.Exit();
        }
    }

    /// <summary>
    /// Hands the appended rows to a new column without copying them (the blocks are shrunk to what was
    /// appended, in place where jemalloc can); the column has no validity bitmap if no row is null, and
    /// its dictionary holds each distinct value once, in the order first appended. The builder starts
    /// again empty, whether the build succeeds or not.
    /// </summary>
    /// <returns>The column, which the caller owns.</returns>
    /// <exception cref="ObjectDisposedException">The builder was disposed.</exception>
    /// <exception cref="InvalidOperationException">Another thread is using the builder.</exception>
    /// <exception cref="OutOfMemoryException">A block cannot be shrunk or allocated; the rows are freed and the builder is empty.</exception>
    public NativeDictionaryColumn Build()
    {
        _guard.Enter(this, TypeName);
        try
        {
            DictionaryBlocks blocks = _blocks ?? new DictionaryBlocks(_options, _capacity);
            Volatile.Write(ref _blocks, null);
            using (blocks)
            {
                return blocks.Build(IsUtf8);
            }
        }
        finally
        {
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

    private DictionaryBlocks Blocks()
    {
        if (_blocks is null)
        {
            Volatile.Write(ref _blocks, new DictionaryBlocks(_options, _capacity));
        }

        return _blocks!;
    }

    /// <summary>The growing blocks of the rows appended so far: the distinct values, the rows' indices and their validity bits.</summary>
    private sealed class DictionaryBlocks : IDisposable
    {
        private const int InitialRows = 4096;

        // Indices wait here and go to the block in runs, so that a row costs no call into the writer.
        private readonly int[] _pending = new int[1024];
        private int _pendingCount;

        // The validity bits of the rows after the last whole byte written to the validity block.
        private int _pendingBits;
        private long _nullCount;
        private long _rows;

        internal DictionaryBlocks(AllocationOptions? options, long capacity)
        {
            long rows = Math.Max(InitialRows, capacity);
            try
            {
                Table = new DictionaryTable(options);
                Indices = options is { } a ? new NativeBufferWriter<int>(rows, a) : new NativeBufferWriter<int>(rows);
                Validity = options is { } b ? new NativeBufferWriter<byte>((rows / 8) + 1, b) : new NativeBufferWriter<byte>((rows / 8) + 1);
            }
            catch
            {
                Dispose();
                throw;
            }
        }

        internal DictionaryTable Table { get; } = null!;

        internal long Rows => Volatile.Read(ref _rows);

        private NativeBufferWriter<int> Indices { get; } = null!;

        private NativeBufferWriter<byte> Validity { get; } = null!;

        // Room for the row's index and validity byte is taken before its value goes into the
        // dictionary, so a failure to grow leaves the rows and the dictionary as they were.
        internal void MakeRoom()
        {
            if ((_rows & 7) == 7)
            {
                Validity.GetSpan(1);
            }

            if (_pendingCount == _pending.Length)
            {
                Flush();
            }
        }

        // After MakeRoom: records the row, which cannot fail.
        internal void Append(int index, bool valid)
        {
            int bit = (int)(_rows & 7);
            _pending[_pendingCount++] = index;
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
                Validity.GetSpan(1)[0] = (byte)_pendingBits;
                Validity.Advance(1);
                _pendingBits = 0;
            }

            Volatile.Write(ref _rows, _rows + 1);
        }

        // Hands the blocks to a column; whatever is not handed over is freed by Dispose.
        internal NativeDictionaryColumn Build(bool isUtf8)
        {
            Flush();
            if (_rows % 8 != 0)
            {
                Validity.GetSpan(1)[0] = (byte)_pendingBits;
                Validity.Advance(1);
            }

            if (Indices.WrittenCount == 0)
            {
                // An array has at least one element; the column's length says none of it is a row.
                Indices.GetSpan(1)[0] = 0;
                Indices.Advance(1);
            }

            HugeArray<int>? indices = null;
            HugeArray<byte>? validity = null;
            NativeStringColumn? dictionary = null;
            try
            {
                indices = Indices.DetachToHugeArray();
                validity = _nullCount > 0 ? Validity.DetachToHugeArray() : null;
                dictionary = Table.BuildDictionary(isUtf8);
                return new NativeDictionaryColumn(indices, validity, dictionary, _rows);
            }
            catch
            {
                indices?.Dispose();
                validity?.Dispose();
                dictionary?.Dispose();
                throw;
            }
        }

        public void Dispose()
        {
            Table?.Dispose();
            Indices?.Dispose();
            Validity?.Dispose();
        }

        private void Flush()
        {
            if (_pendingCount > 0)
            {
                _pending.AsSpan(0, _pendingCount).CopyTo(Indices.GetSpan(_pendingCount));
                Indices.Advance(_pendingCount);
                _pendingCount = 0;
            }
        }
    }
}
