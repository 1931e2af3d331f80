using System.Runtime.CompilerServices;
using jemalloc.Internal;
using jemalloc.Ledger;
using jemalloc.Records;

namespace jemalloc;

/// <summary>
/// Packs many UTF-8 strings into large blocks of native memory and hands out
/// <see cref="StoredUtf8String"/> values for them: one ledger entry per block instead of one per
/// string, and no managed object per string, so millions of strings cost the garbage collector
/// nothing. <see cref="Reset"/> or <see cref="Dispose"/> frees every block at once, after which every
/// value the store handed out throws <see cref="ObjectDisposedException"/>.
/// </summary>
/// <remarks>
/// <para>
/// Strings are only ever appended. <see cref="Replace"/> stores the new text and leaves the old bytes
/// in place (old values stay readable until the store is reset): that space is counted in
/// <see cref="AbandonedBytes"/> and given back only by <see cref="Reset"/> or by building a new store.
/// A string longer than the block size gets a block of its own. Each string takes two to six bytes
/// more than its UTF-8 bytes (a header: whether it was replaced, and its length), and each block
/// four (how much of it is written): the layout that lets every read of a
/// <see cref="StoredUtf8String"/> check that its offset and length name one whole string of the block.
/// </para>
/// <para>
/// Threads: one writer (<see cref="Add(string)"/>, <see cref="Replace"/>, <see cref="Reset"/>,
/// <see cref="Dispose"/>) and any number of readers of the values. Appending never moves or changes
/// stored bytes, so readers may read while the writer appends. Two threads writing at once is a bug
/// the store detects: the second throws <see cref="InvalidOperationException"/>. A reader that must
/// not race a <see cref="Reset"/> or <see cref="Dispose"/> holds an <see cref="EnterRead"/> scope, while
/// which both throw <see cref="InvalidOperationException"/> and free nothing; a value read without a
/// scope is checked, but a reset on another thread in the middle of that read is a data race, as for
/// a <see cref="FixedBuffer{T}"/> indexer.
/// </para>
/// <para>
/// A store made with a <see cref="JemArena"/>'s options keeps one more allocation of a byte in that
/// arena (<see cref="AllocationKind.StringStoreScopeAnchor"/>), which every open read scope and every
/// write leases: while one is open the arena's <see cref="JemArena.Reset"/> and
/// <see cref="JemArena.Dispose"/> throw <see cref="InvalidOperationException"/> and free nothing. Once
/// the arena was reset or disposed, the store went with it: its values and members throw
/// <see cref="ObjectDisposedException"/>, and only <see cref="Dispose"/> still works.
/// </para>
/// <para>
/// A store that is never disposed keeps its blocks (and, in an arena, its anchor): the <see cref="AllocationLedger"/> lists them.
/// </para>
/// </remarks>
public sealed unsafe class Utf8StringStore : IDisposable, IWriterGuarded
{
    /// <summary>The block size used when none is given: 1 MiB.</summary>
    public const int DefaultBlockSize = 1 << 20;

    /// <summary>The smallest block size.</summary>
    public const int MinBlockSize = 4096;

    /// <summary>The largest block size (and the longest string, in UTF-8 bytes): 1 GiB.</summary>
    public const int MaxBlockSize = 1 << 30;

    private const string TypeName = "Utf8StringStore";
    private const int Closing = 1 << 30;
    private const int Disposed = 1 << 29;
    private const int ReaderMask = Disposed - 1;
    private const int ShortChars = StoredStringEncoding.ShortChars;

    private static int s_lastScopeTag;

    // Tags this store's read-scope tokens (never 0, the untagged tokens' tag).
    private readonly int _scopeTag = NextScopeTag();

    private readonly int _blockSize;
    // The blocks, the writing of strings into them, and in a JemArena the anchor.
    private readonly StringBlocks _blocks;
    private long _count;
    private long _usedBytes;
    private long _abandonedBytes;
    // Readers (EnterRead scopes) in the low bits; Closing while a reset or dispose runs; Disposed.
    private int _state;
    private SingleWriterGuard _writer;

    /// <summary>A store with blocks of <see cref="DefaultBlockSize"/> bytes in the default arena; a block takes huge pages from <see cref="HugePagePolicy.ThresholdBytes"/> on, as an array created without options does.</summary>
    public Utf8StringStore()
        : this(DefaultBlockSize, null)
    {
    }

    /// <summary>A store with blocks of <paramref name="blockSize"/> bytes.</summary>
    /// <param name="blockSize">Bytes per block, from <see cref="MinBlockSize"/> to <see cref="MaxBlockSize"/>.</param>
    /// <param name="options">Arena, alignment and huge-page choices for the blocks.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="blockSize"/> is out of range.</exception>
    /// <exception cref="ArgumentException">The options name a thread cache, arena or alignment that cannot be used.</exception>
    /// <exception cref="ObjectDisposedException">The options name a destroyed <see cref="JemArena"/>.</exception>
    /// <exception cref="ArenaBudgetExceededException">The options' arena has no room left in its budget for the store's read-scope anchor (a few bytes).</exception>
    /// <exception cref="OutOfMemoryException">The read-scope anchor cannot be had.</exception>
    public Utf8StringStore(int blockSize, AllocationOptions options)
        : this(blockSize, (AllocationOptions?)options)
    {
    }

    private Utf8StringStore(int blockSize, AllocationOptions? options)
    {
        if (blockSize is < MinBlockSize or > MaxBlockSize)
        {
            ThrowHelper.ThrowArgumentOutOfRange(nameof(blockSize), blockSize, $"The block size must be from {MinBlockSize} to {MaxBlockSize} bytes.");
        }

        _blockSize = blockSize;
        _blocks = new StringBlocks(blockSize, options);
    }

    /// <summary>The bytes per block.</summary>
    public int BlockSize => _blockSize;

    /// <summary>How many strings were stored since the store was made or reset (replacements included).</summary>
    /// <exception cref="ObjectDisposedException">The store was disposed, or the arena it was made in was reset or disposed.</exception>
    public long Count
    {
        get
        {
            ThrowIfUnusable();
            return Volatile.Read(ref _count);
        }
    }

    /// <summary>The UTF-8 bytes of all strings stored (replaced ones included).</summary>
    /// <exception cref="ObjectDisposedException">The store was disposed, or the arena it was made in was reset or disposed.</exception>
    public long UsedBytes
    {
        get
        {
            ThrowIfUnusable();
            return Volatile.Read(ref _usedBytes);
        }
    }

    /// <summary>
    /// The bytes of strings that <see cref="Replace"/> superseded, held until <see cref="Reset"/>: each
    /// string counted once, however many times it (or a copy of its value) is replaced.
    /// </summary>
    /// <exception cref="ObjectDisposedException">The store was disposed, or the arena it was made in was reset or disposed.</exception>
    public long AbandonedBytes
    {
        get
        {
            ThrowIfUnusable();
            return Volatile.Read(ref _abandonedBytes);
        }
    }

    /// <summary>The native bytes the blocks occupy.</summary>
    /// <exception cref="ObjectDisposedException">The store was disposed, or the arena it was made in was reset or disposed.</exception>
    public long ReservedBytes
    {
        get
        {
            ThrowIfUnusable();
            return _blocks.ReservedBytes;
        }
    }

    /// <summary>How many blocks (ledger entries) the store holds.</summary>
    /// <exception cref="ObjectDisposedException">The store was disposed, or the arena it was made in was reset or disposed.</exception>
    public int BlockCount
    {
        get
        {
            ThrowIfUnusable();
            return _blocks.Count;
        }
    }

    /// <summary>Whether the store was disposed. A reset of the arena it was made in does not dispose it (its members then throw <see cref="ObjectDisposedException"/>; <see cref="Dispose"/> still works).</summary>
    public bool IsDisposed => (Volatile.Read(ref _state) & Disposed) != 0;

    /// <summary>Stores the UTF-8 encoding of <paramref name="value"/>.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="value"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="value"/> has an unpaired surrogate, or encodes to more than <see cref="MaxBlockSize"/> bytes.</exception>
    /// <exception cref="ObjectDisposedException">The store was disposed, or the arena its blocks are in was reset.</exception>
    /// <exception cref="InvalidOperationException">Another thread is writing to the store.</exception>
    /// <exception cref="OutOfMemoryException">A new block cannot be had.</exception>
    public StoredUtf8String Add(string value)
    {
        ArgumentNullException.ThrowIfNull(value);
        return AddChars(value);
    }

    /// <summary>Stores the UTF-8 encoding of <paramref name="value"/>.</summary>
    /// <exception cref="ArgumentException"><paramref name="value"/> has an unpaired surrogate, or encodes to more than <see cref="MaxBlockSize"/> bytes, or another thread changed it while it was being stored.</exception>
    /// <exception cref="ObjectDisposedException">The store was disposed, or the arena its blocks are in was reset.</exception>
    /// <exception cref="InvalidOperationException">Another thread is writing to the store.</exception>
    /// <exception cref="OutOfMemoryException">A new block cannot be had.</exception>
    public StoredUtf8String Add(ReadOnlySpan<char> value) => AddChars(value);

    // Text of up to ShortChars characters is encoded in one pass, into a buffer on this thread's
    // stack, each character's bytes from the one read that chose how to encode it: the pass finds an
    // unpaired surrogate and gives the length, so there is no counting pass; and such bytes are whole
    // UTF-8 even when another thread changes the caller's span meanwhile, so the bytes stored (the
    // buffer's, which no other thread can reach) need no check either.
    [SkipLocalsInit]
    private StoredUtf8String AddChars(ReadOnlySpan<char> value)
    {
        if (value.Length > ShortChars)
        {
            return AddLong(value);
        }

        Span<byte> encoded = stackalloc byte[ShortChars * 3];
        int written = StoredStringEncoding.EncodeShort(value, encoded);
        if (written < 0)
        {
            ThrowHelper.ThrowArgument(nameof(value), $"The string has an unpaired surrogate at index {~written}: it cannot be encoded as UTF-8.");
        }

        BeginWrite();
        LedgerBlock leased = default;
        try
        {
            return AppendEncoded(encoded[..written], ref leased);
        }
        finally
        {
            StringBlocks.EndLease(leased);
            EndWrite();
        }
    }

    /// <summary>
    /// Stores the UTF-8 encoding of each string of <paramref name="values"/> and writes its value at the
    /// same position of <paramref name="destination"/>: a bulk load (building a table) takes the
    /// store's writer and leases each block once for the whole call instead of once per string.
    /// </summary>
    /// <remarks>
    /// The strings are stored in order. If one cannot be (it is null, or has an unpaired surrogate),
    /// the call throws; the strings before it stay stored, with their values in <paramref name="destination"/>.
    /// </remarks>
    /// <exception cref="ArgumentException"><paramref name="destination"/> is shorter than <paramref name="values"/>, or a string has an unpaired surrogate or encodes to more than <see cref="MaxBlockSize"/> bytes (those before it were stored).</exception>
    /// <exception cref="ArgumentNullException">A string is null (those before it were stored).</exception>
    /// <exception cref="ObjectDisposedException">The store was disposed, or the arena its blocks are in was reset.</exception>
    /// <exception cref="InvalidOperationException">Another thread is writing to the store.</exception>
    /// <exception cref="OutOfMemoryException">A new block cannot be had.</exception>
    [SkipLocalsInit]
    public void AddRange(ReadOnlySpan<string> values, Span<StoredUtf8String> destination)
    {
        if (destination.Length < values.Length)
        {
            ThrowHelper.ThrowArgument(nameof(destination), $"The destination ({destination.Length}) must be at least as long as the values ({values.Length}).");
        }

        Span<byte> encoded = stackalloc byte[ShortChars * 3];
        BeginWrite();
        // The block written to stays leased from one string to the next (see StringBlocks.AppendEncoded).
        LedgerBlock leased = default;
        try
        {
            for (int i = 0; i < values.Length; i++)
            {
                string value = values[i];
                if (value is null)
                {
                    throw new ArgumentNullException(nameof(values), $"The string at index {i} is null (the strings before it were stored).");
                }

                if (value.Length > ShortChars)
                {
                    // Leased and released by Append itself.
                    StringBlocks.EndLease(leased);
                    leased = default;
                    destination[i] = Append(value, default, StoredStringEncoding.ByteCount(value));
                    continue;
                }

                int written = StoredStringEncoding.EncodeShort(value, encoded);
                if (written < 0)
                {
                    ThrowHelper.ThrowArgument(nameof(values), $"The string at index {i} has an unpaired surrogate at index {~written}: it cannot be encoded as UTF-8 (the strings before it were stored).");
                }

                destination[i] = AppendEncoded(encoded[..written], ref leased);
            }
        }
        finally
        {
            StringBlocks.EndLease(leased);
            EndWrite();
        }
    }

    private StoredUtf8String AddLong(ReadOnlySpan<char> value)
    {
        int byteCount = StoredStringEncoding.ByteCount(value);
        BeginWrite();
        try
        {
            return Append(value, default, byteCount);
        }
        finally
        {
            EndWrite();
        }
    }

    /// <summary>Stores a copy of the UTF-8 bytes <paramref name="utf8"/>, checking the copy is valid UTF-8 (so bytes another thread changes meanwhile are checked as stored).</summary>
    /// <exception cref="ArgumentException"><paramref name="utf8"/> is not valid UTF-8, or is longer than <see cref="MaxBlockSize"/>.</exception>
    /// <exception cref="ObjectDisposedException">The store was disposed, or the arena its blocks are in was reset.</exception>
    /// <exception cref="InvalidOperationException">Another thread is writing to the store.</exception>
    /// <exception cref="OutOfMemoryException">A new block cannot be had.</exception>
    public StoredUtf8String Add(ReadOnlySpan<byte> utf8)
    {
        if (utf8.Length > MaxBlockSize)
        {
            ThrowHelper.ThrowArgument(nameof(utf8), $"A stored string is at most {MaxBlockSize} bytes; this one is {utf8.Length}.");
        }

        BeginWrite();
        try
        {
            return Append(default, utf8, utf8.Length, fromChars: false);
        }
        finally
        {
            EndWrite();
        }
    }

    /// <summary>
    /// Stores <paramref name="value"/> as the new text of <paramref name="old"/> and returns its value.
    /// The old bytes stay where they are (and <paramref name="old"/> stays readable) until
    /// <see cref="Reset"/>; they are counted in <see cref="AbandonedBytes"/>.
    /// </summary>
    /// <exception cref="ArgumentNullException"><paramref name="value"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="old"/> is not a live value of this store (or is a mix of two values, see <see cref="StoredUtf8String"/>), or <paramref name="value"/> cannot be encoded (see <see cref="Add(string)"/>).</exception>
    /// <exception cref="ObjectDisposedException">The store was disposed, or the arena its blocks are in was reset.</exception>
    /// <exception cref="InvalidOperationException">Another thread is writing to the store.</exception>
    /// <exception cref="OutOfMemoryException">A new block cannot be had.</exception>
    public StoredUtf8String Replace(StoredUtf8String old, string value)
    {
        ArgumentNullException.ThrowIfNull(value);
        int byteCount = StoredStringEncoding.ByteCount(value);
        BeginWrite();
        try
        {
            // Checked as the writer: a reset by another thread between this check and the append
            // would otherwise let a dead value through.
            // A racy copy may pair a block of this store with another value's offset and length:
            // checked whole before anything is written, so its marker is the one Abandon then sets.
            if (!Owns(old) || !StringBlocks.Abandon(old, set: false))
            {
                ThrowHelper.ThrowArgument(nameof(old), "The value to replace was not handed out by this store (or is a mix of two values), or the store was reset since.");
            }

            StoredUtf8String replacement = Append(value, default, byteCount);
            if (StringBlocks.Abandon(old, set: true))
            {
                _ = Interlocked.Add(ref _abandonedBytes, old.UncheckedLength);
            }

            return replacement;
        }
        finally
        {
            EndWrite();
        }
    }

    /// <summary>Whether <paramref name="value"/> was handed out by this store and is still live.</summary>
    /// <remarks>Reads the store's block set: call it from the writer thread, or while no thread writes.</remarks>
    public bool Owns(StoredUtf8String value) => !value.IsDefault && value.IsValid && _blocks.Contains(value.Block);

    /// <summary>
    /// Opens a read scope: until it is disposed, <see cref="Reset"/> and <see cref="Dispose"/> throw
    /// <see cref="InvalidOperationException"/>, and so do the <see cref="JemArena.Reset"/> and
    /// <see cref="JemArena.Dispose"/> of the arena the store was made in, so values can be read on this
    /// thread without racing them. Use it as <c>using var scope = store.EnterRead();</c>.
    /// </summary>
    /// <exception cref="ObjectDisposedException">The store was disposed, or the arena it was made in was reset or disposed.</exception>
    /// <exception cref="InvalidOperationException">The store already has the most read scopes it counts (32,767 for a store in a <see cref="JemArena"/>), or the ledger is full.</exception>
    public StringStoreReadScope EnterRead()
    {
        var spin = default(SpinWait);
        while (true)
        {
            int state = Volatile.Read(ref _state);
            if ((state & Disposed) != 0)
            {
                ThrowHelper.ThrowDisposed(TypeName);
            }

            if (_blocks.WentWithArena)
            {
                // Before the count: a scope refused for a reset of the arena keeps no Dispose waiting.
                ThrowHelper.ThrowWentWithArena(TypeName);
            }

            if ((state & Closing) != 0)
            {
                // A reset is freeing the blocks; afterwards the store is usable again.
                spin.SpinOnce();
                continue;
            }

            if ((state & ReaderMask) == ReaderMask)
            {
                ThrowHelper.ThrowInvalidOperation($"This {TypeName} already has {ReaderMask} read scopes open.");
            }

            if (Interlocked.CompareExchange(ref _state, state + 1, state) == state)
            {
                return OpenScope();
            }
        }
    }

    // The rest of EnterRead once the scope is counted: the anchor's lease, which holds the arena's
    // reset back (or throws if a reset came first), and the scope's token.
    private StringStoreReadScope OpenScope()
    {
        try
        {
            _blocks.LeaseAnchor();
        }
        catch
        {
            _ = Interlocked.Decrement(ref _state);
            throw;
        }

        LedgerBlock token;
        try
        {
            token = LedgerBlock.TakeToken(_scopeTag);
        }
        catch
        {
            ExitRead();
            throw;
        }

        return new StringStoreReadScope(this, token);
    }

    private void ThrowIfUnusable()
    {
        if (IsDisposed)
        {
            ThrowHelper.ThrowDisposed(TypeName);
        }

        if (_blocks.WentWithArena)
        {
            ThrowHelper.ThrowWentWithArena(TypeName);
        }
    }

    // The writer, holding the arena's reset back for the write (see StringBlocks.LeaseAnchor).
    private void BeginWrite()
    {
        EnterWrite();
        try
        {
            _blocks.LeaseAnchor();
        }
        catch
        {
            ExitWrite();
            throw;
        }
    }

    private void EndWrite()
    {
        _blocks.ExitAnchor();
        ExitWrite();
    }

    /// <summary>Frees every block: every value handed out so far becomes invalid, and the store starts empty.</summary>
    /// <exception cref="ObjectDisposedException">The store was disposed, or the arena it was made in was reset or disposed.</exception>
    /// <exception cref="InvalidOperationException">A read scope is open, or another thread is writing to the store.</exception>
    public void Reset()
    {
        BeginWrite();
        try
        {
            Close(dispose: false);
        }
        finally
        {
            EndWrite();
        }
    }

    /// <summary>Frees every block; every value handed out becomes invalid. Disposing again does nothing; disposing a store whose arena was reset frees nothing twice.</summary>
    /// <exception cref="InvalidOperationException">A read scope is open, or another thread is writing to the store.</exception>
    public void Dispose()
    {
        if (IsDisposed)
        {
            return;
        }

        EnterWrite();
        try
        {
            Close(dispose: true);
        }
        finally
        {
            ExitWrite();
        }
    }

    /// <summary>The tag of this store's read-scope tokens.</summary>
    internal int ScopeTag => _scopeTag;

    private static int NextScopeTag()
    {
        int tag;
        do
        {
            tag = Interlocked.Increment(ref s_lastScopeTag);
        }
        while (tag == 0);

        return tag;
    }

    // Closes one scope. Its token lets each scope close once, so the count is above zero here and no
    // reset or dispose (which need it at zero) can have set the other bits meanwhile.
    // The anchor's lease ends first: a dispose the closed count lets in frees the anchor.
    internal void ExitRead()
    {
        _blocks.ExitAnchor();
        _ = Interlocked.Decrement(ref _state);
    }

    private void Close(bool dispose)
    {
        int state = Volatile.Read(ref _state);
        if ((state & ReaderMask) != 0 || Interlocked.CompareExchange(ref _state, Closing, state) != state)
        {
            ThrowHelper.ThrowInvalidOperation($"This {TypeName} cannot be {(dispose ? "disposed" : "reset")}: {Volatile.Read(ref _state) & ReaderMask} read scope(s) are open. Dispose them first.");
        }

        _blocks.FreeAll(anchorToo: dispose);
        Volatile.Write(ref _count, 0);
        Volatile.Write(ref _usedBytes, 0);
        Volatile.Write(ref _abandonedBytes, 0);
        Volatile.Write(ref _state, dispose ? Disposed : 0);
    }

    internal void EnterWrite() => _writer.Enter(this, TypeName);

    internal void ExitWrite() => _writer.Exit();

    // Stores byteCount UTF-8 bytes, encoded from chars or copied from utf8, checked where they are
    // stored (see StringBlocks.TryAppend); the caller is the writer.
    private StoredUtf8String Append(ReadOnlySpan<char> chars, ReadOnlySpan<byte> utf8, int byteCount, bool fromChars = true)
    {
        if (!_blocks.TryAppend(chars, utf8, byteCount, fromChars, out LedgerBlock block, out int offset))
        {
            ThrowHelper.ThrowArgument(fromChars ? "value" : nameof(utf8), fromChars
                ? "The text changed while it was being stored (another thread wrote to it): it was not stored."
                : "The bytes are not valid UTF-8 (or another thread changed them while they were being stored): they were not stored.");
        }

        return Commit(block, offset, byteCount);
    }

    // Stores bytes encoded by StoredStringEncoding.EncodeShort into this thread's buffer, under the
    // block lease the caller carries from one string to the next (see StringBlocks.AppendEncoded);
    // the caller is the writer.
    private StoredUtf8String AppendEncoded(ReadOnlySpan<byte> utf8, ref LedgerBlock leased)
    {
        int offset = _blocks.AppendEncoded(utf8, ref leased, out LedgerBlock block);
        return Commit(block, offset, utf8.Length);
    }

    private StoredUtf8String Commit(LedgerBlock block, int offset, int length)
    {
        // The writer alone changes the counts (readers read them with Volatile.Read): no atomic needed.
        Volatile.Write(ref _count, _count + 1);
        Volatile.Write(ref _usedBytes, _usedBytes + length);
        return new StoredUtf8String(block, offset, length);
    }
}
