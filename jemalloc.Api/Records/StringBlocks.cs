using System.Buffers;
using System.Text.Unicode;
using jemalloc.Internal;
using jemalloc.Ledger;
using jemalloc.Memory;

namespace jemalloc.Records;

/// <summary>
/// The native memory of a <see cref="Utf8StringStore"/>: its blocks (the current one strings are
/// appended to, those filled before it, and those of strings longer than a block), the reservation
/// and writing of each string's record in them (<see cref="StoredStringLayout"/>), and in a
/// <see cref="JemArena"/> the anchor that holds the arena's reset back.
/// </summary>
/// <remarks>
/// Only the store's writer calls it, but for <see cref="ReservedBytes"/> (any thread) and the anchor's
/// state. Messages name the store, whose memory this is.
/// </remarks>
internal sealed unsafe class StringBlocks
{
    private const string OwnerName = nameof(Utf8StringStore);

    private readonly int _blockSize;
    // Null: each block asks HugePagePolicy at its size, as an array created without options does.
    private readonly AllocationOptions? _options;
    // In a JemArena: a small allocation there that every read scope and every write leases, so the
    // arena's reset or dispose refuses while one is open (one lease, whatever the number of blocks);
    // once a reset freed it, the store is gone with its blocks. Default in the default arena.
    private readonly LedgerBlock _anchor;
    private readonly List<FixedBuffer<byte>> _blocks = [];
    private readonly HashSet<LedgerBlock> _blockSet = [];
    private FixedBuffer<byte> _current;
    private byte* _currentPointer;
    private int _currentUsed;
    private int _currentSize;
    private long _reservedBytes;

    /// <summary>No blocks yet; in an arena (<paramref name="options"/> name one), the anchor.</summary>
    /// <exception cref="ArgumentException">The options name a thread cache or arena that cannot be used.</exception>
    /// <exception cref="ObjectDisposedException">The options name a destroyed <see cref="JemArena"/>.</exception>
    /// <exception cref="ArenaBudgetExceededException">The arena has no room left in its budget for the anchor.</exception>
    /// <exception cref="OutOfMemoryException">The anchor cannot be had.</exception>
    internal StringBlocks(int blockSize, AllocationOptions? options)
    {
        _blockSize = blockSize;
        _options = options;
        if (options is { Flags.ArenaIndex: uint arena } given)
        {
            // The arena alone: no alignment or huge pages for an allocation of one byte.
            _ = LedgerBlock.Allocate(1, given with { Flags = MallocxFlags.Arena(arena), HugePages = false }, AllocationKind.StringStoreScopeAnchor, ElementTypes.IdOf<byte>(), out _anchor);
        }
    }

    /// <summary>How many blocks (ledger entries) there are.</summary>
    internal int Count => _blocks.Count;

    /// <summary>The native bytes the blocks occupy.</summary>
    internal long ReservedBytes => Volatile.Read(ref _reservedBytes);

    /// <summary>Whether the store was made in an arena whose reset or dispose has since freed the anchor (and the blocks with it).</summary>
    internal bool WentWithArena => !_anchor.IsDefault && !_anchor.IsLive;

    /// <summary>Whether <paramref name="block"/> is one of the blocks (live or not).</summary>
    internal bool Contains(LedgerBlock block) => _blockSet.Contains(block);

    /// <summary>
    /// A lease on the anchor (nothing in the default arena), for a write or a read scope: the arena
    /// cannot be reset or disposed until <see cref="ExitAnchor"/>. It outlives the call, so it is
    /// begun and ended apart.
    /// </summary>
    /// <exception cref="ObjectDisposedException">A reset or dispose of the arena came first.</exception>
    internal void LeaseAnchor()
    {
        if (_anchor.IsDefault)
        {
            return;
        }

        try
        {
            _anchor.BeginLease(OwnerName);
        }
        catch (ObjectDisposedException) when (!_anchor.IsLive)
        {
            ThrowHelper.ThrowWentWithArena(OwnerName);
        }
    }

    /// <summary>Ends the lease of <see cref="LeaseAnchor"/>.</summary>
    internal void ExitAnchor()
    {
        if (!_anchor.IsDefault)
        {
            _anchor.EndLease();
        }
    }

    /// <summary>
    /// Stores <paramref name="byteCount"/> UTF-8 bytes, encoded from <paramref name="chars"/> or copied
    /// from <paramref name="utf8"/>, in the current block, a new one or one of its own, checking them
    /// where they are stored: they were read from the caller's span once, so another thread changing
    /// it meanwhile can only make this fail, never store bytes that are not whole UTF-8 (which the
    /// value checks rely on) or bytes never written.
    /// </summary>
    /// <returns>Whether the bytes were stored; if not, nothing was taken (a block of its own is freed again).</returns>
    /// <exception cref="ObjectDisposedException">The arena the blocks are in was reset.</exception>
    /// <exception cref="OutOfMemoryException">A new block cannot be had.</exception>
    internal bool TryAppend(ReadOnlySpan<char> chars, ReadOnlySpan<byte> utf8, int byteCount, bool fromChars, out LedgerBlock block, out int offset)
    {
        byte* start = Reserve(byteCount, out block, out offset, out bool ownBlock);
        // Taken before the try and ended inside its finally, before a failed block of its own is
        // freed (a leased block cannot be).
        LedgerBlock.LeaseScope lease = block.Lease(OwnerName);
        bool whole = false;
        try
        {
            var destination = new Span<byte>(start + offset, byteCount);
            if (fromChars)
            {
                whole = Utf8.FromUtf16(chars, destination, out int read, out int written, replaceInvalidSequences: false) == OperationStatus.Done &&
                        read == chars.Length && written == byteCount;
            }
            else
            {
                utf8.CopyTo(destination);
                whole = true;
            }

            whole = whole && Utf8.IsValid(destination);
            if (whole)
            {
                StoredStringLayout.WriteHeader(start + offset, byteCount);
                StoredStringLayout.Publish(start, offset + byteCount);
            }
        }
        finally
        {
            lease.Dispose();
            if (!whole && ownBlock)
            {
                DropLastBlock();
            }
        }

        if (whole && !ownBlock)
        {
            _currentUsed = offset + byteCount;
        }

        return whole;
    }

    /// <summary>
    /// Stores bytes encoded by <see cref="StoredStringEncoding.EncodeShort"/> into the writer's own
    /// buffer (whole UTF-8 that no other thread can change: stored unchecked) in the current block or
    /// a new one. The block is leased once for as many strings as it takes, a lease that outlives this
    /// call: <paramref name="leased"/> is the block the caller holds one on (default: none), moved here
    /// to the block written, and ended by the caller (<see cref="EndLease"/>). A short string always fits
    /// a shared block (<see cref="StoredStringEncoding.ShortChars"/> * 3 and its header are below
    /// <see cref="Utf8StringStore.MinBlockSize"/>).
    /// </summary>
    /// <returns>Where the bytes start in <paramref name="block"/>.</returns>
    /// <exception cref="ObjectDisposedException">The arena the blocks are in was reset.</exception>
    /// <exception cref="OutOfMemoryException">A new block cannot be had.</exception>
    internal int AppendEncoded(ReadOnlySpan<byte> utf8, ref LedgerBlock leased, out LedgerBlock block)
    {
        int byteCount = utf8.Length;
        byte* start = Reserve(byteCount, out block, out int offset, out _);
        if (block != leased)
        {
            EndLease(leased);
            leased = default;
            block.BeginLease(OwnerName);
            leased = block;
        }

        utf8.CopyTo(new Span<byte>(start + offset, byteCount));
        StoredStringLayout.WriteHeader(start + offset, byteCount);
        StoredStringLayout.Publish(start, offset + byteCount);
        _currentUsed = offset + byteCount;
        return offset;
    }

    /// <summary>Ends the lease <see cref="AppendEncoded"/> left on <paramref name="leased"/>, if any.</summary>
    internal static void EndLease(LedgerBlock leased)
    {
        if (!leased.IsDefault)
        {
            leased.EndLease();
        }
    }

    /// <summary>
    /// With <paramref name="set"/> false: whether <paramref name="old"/> names one whole string of its
    /// block (the caller checked that the block is live and the store's). With <paramref name="set"/>
    /// true: marks that string abandoned; false if it was already (it was replaced before, through this
    /// or another copy), so its bytes count once.
    /// </summary>
    /// <exception cref="ObjectDisposedException">The block is no longer live.</exception>
    internal static bool Abandon(StoredUtf8String old, bool set)
    {
        using LedgerBlock.LeaseScope lease = old.Block.Lease(OwnerName);
        byte* marker = StoredStringLayout.Find((byte*)lease.Address, (uint)lease.Size, old.Offset, old.UncheckedLength);
        if (marker == null || !set)
        {
            return marker != null;
        }

        if (*marker == StoredStringLayout.Abandoned)
        {
            return false;
        }

        *marker = StoredStringLayout.Abandoned;
        return true;
    }

    /// <summary>
    /// Frees every block, and with <paramref name="anchorToo"/> the anchor; the blocks start over,
    /// empty. Blocks and an anchor that an arena's reset or dispose freed already are skipped.
    /// </summary>
    internal void FreeAll(bool anchorToo)
    {
        foreach (FixedBuffer<byte> block in _blocks)
        {
            try
            {
                block.Free();
            }
            catch (ObjectDisposedException) when (!block.IsValid)
            {
                // The reset of the arena the blocks were made in freed it already.
            }
        }

        if (anchorToo && !_anchor.IsDefault)
        {
            try
            {
                _anchor.Free(OwnerName);
            }
            catch (ObjectDisposedException) when (!_anchor.IsLive)
            {
                // The arena's reset or dispose freed it already.
            }
        }

        _blocks.Clear();
        _blockSet.Clear();
        _current = default;
        _currentPointer = null;
        _currentUsed = 0;
        _currentSize = 0;
        Volatile.Write(ref _reservedBytes, 0);
    }

    // Room for a string of length bytes and its header: in the current block, a new block, or
    // (longer than a block holds) a block of its own. Returns the block's start and where the
    // string goes; nothing is taken until the caller moves _currentUsed, so a string that fails to
    // be written leaves no trace in a shared block.
    private byte* Reserve(int length, out LedgerBlock block, out int offset, out bool ownBlock)
    {
        int header = StoredStringLayout.HeaderBytes(length);
        int needed = header + length;
        ownBlock = needed > _blockSize - StoredStringLayout.FirstRecord;
        if (ownBlock)
        {
            FixedBuffer<byte> own = NewBlock(StoredStringLayout.FirstRecord + needed);
            block = own.Block;
            offset = StoredStringLayout.FirstRecord + header;
            return (byte*)own.UnsafePointer;
        }

        if (_currentPointer == null || _currentSize - _currentUsed < needed)
        {
            _current = NewBlock(_blockSize);
            _currentPointer = _current.UnsafePointer;
            _currentUsed = StoredStringLayout.FirstRecord;
            _currentSize = _blockSize;
        }

        block = _current.Block;
        offset = _currentUsed + header;
        return _currentPointer;
    }

    private FixedBuffer<byte> NewBlock(int size)
    {
        // Not cleared: only written bytes are ever read (readers check values against the written
        // count), and a block's pages stay untouched (out of the resident set) until strings reach them.
        var block = new FixedBuffer<byte>(size, _options ?? HugePagePolicy.DefaultForSize((nuint)size), AllocationKind.StringStoreBlock, zero: false);
        try
        {
            // Under a lease: an arena reset may free a block made with the arena's options.
            using LedgerBlock.LeaseScope lease = block.Block.Lease(OwnerName);
            StoredStringLayout.Initialize((byte*)lease.Address);
        }
        catch (ObjectDisposedException)
        {
            // The arena's reset freed it already: the caller's write throws the same when it leases it.
        }

        _blocks.Add(block);
        _ = _blockSet.Add(block.Block);
        _ = Interlocked.Add(ref _reservedBytes, block.Length);
        return block;
    }

    // Frees the block of its own that a string failed to be written to: the last block made.
    private void DropLastBlock()
    {
        FixedBuffer<byte> block = _blocks[^1];
        _blocks.RemoveAt(_blocks.Count - 1);
        _ = _blockSet.Remove(block.Block);
        _ = Interlocked.Add(ref _reservedBytes, -block.Length);
        try
        {
            block.Free();
        }
        catch (ObjectDisposedException) when (!block.IsValid)
        {
            // The reset of the arena it was made in freed it already.
        }
    }
}
