namespace jemalloc.Caching;

// A write keeps the key's old entry while it makes room for the replacement: reclaims move it forward,
// and one that cannot sets its bytes aside, put back if the write fails.
internal sealed unsafe partial class CacheShard
{
    // The entry a write replaces while it makes room (null when it replaces none): moved forward by the
    // first reclaim that reaches it, as if read, and displaced when it cannot move or is reached again.
    private byte* _replacing;
    private bool _replacingMoved;

    // The entry a write replaces, taken out while making room because it could not move: its bytes and
    // the log it goes back to if the write fails.
    private byte[]? _displaced;
    private int _displacedLog;

    // Takes the replaced entry out of the shard, keeping a copy of its bytes for RestoreDisplaced.
    private void Displace(int slot, byte* entry, int destination)
    {
        long size = CacheEntry.CompactSize(entry);
        _displaced = new byte[size];
        _displacedLog = destination;
        fixed (byte* copy = _displaced)
        {
            Buffer.MemoryCopy(entry, copy, size, size);
        }

        _replacing = null;
        Drop(slot, entry);
    }

    // A write that failed puts back the old entry it displaced while making room. Its bytes were given
    // back to the budget when it left, so the room is normally there; if not (its segment was pinned by
    // a lease, and nothing else could give room), the old value is lost with the write.
    private void RestoreDisplaced()
    {
        byte[]? displaced = _displaced;
        _displaced = null;
        if (displaced is null)
        {
            return;
        }

        long size = displaced.Length;
        long roomNeeded = RoomNeeded;
        byte* entry;
        CacheSegment segment;
        try
        {
            entry = Append(size, _displacedLog, out segment);
        }
        catch (InvalidOperationException)
        {
            // The write's own failure is the one reported.
            entry = null;
            segment = null!;
        }

        // The room the write needed, not the room the old entry did.
        RoomNeeded = roomNeeded;
        if (entry == null)
        {
            _counters.Evicted++;
            return;
        }

        fixed (byte* copy = displaced)
        {
            Buffer.MemoryCopy(copy, entry, size, size);
        }

        CacheEntry.ClearSlack(entry);
        if (CacheEntry.Expires(entry))
        {
            segment.MaxDeadline = Math.Max(segment.MaxDeadline, CacheEntry.Deadline(entry));
        }

        uint hash = CacheEntry.Hash(entry);
        Insert(Pack(CacheEntry.Tag(entry), segment.Id, (int)(entry - segment.Pointer), entry), hash);
        _count++;
        _keyValueBytes += CacheEntry.KeyLength(entry) + (long)CacheEntry.ValueLength(entry);
        _entryBytes += size;
        Version++;
    }
}
