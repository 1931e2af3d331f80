using System.Runtime.CompilerServices;
using System.Runtime.Intrinsics.X86;
using jemalloc.Ledger;

namespace jemalloc.Caching;

// The index (open addressing, linear probing, backward-shift deletion) and the ghost table.
internal sealed unsafe partial class CacheShard
{
    // ---------------------------------------------------------------- ghost table

    private bool InGhost(uint hash, ushort tag) =>
        _ghost != null && _ghost[hash & (uint)_ghostMask] == Fingerprint(hash, tag);

    private void AddGhost(uint hash, ushort tag)
    {
        if (_ghost != null)
        {
            _ghost[hash & (uint)_ghostMask] = Fingerprint(hash, tag);
        }
    }

    private static uint Fingerprint(uint hash, ushort tag) => ((uint)tag << 16) | (hash >> 16) | 1;

    // ---------------------------------------------------------------- index

    // False (with RoomNeeded set) when other shards must give room first, which the caller waits for outside this lock.
    private bool EnsureIndexRoom()
    {
        if (_slots != null && (_count + 1) * 4L <= (_mask + 1) * 3L)
        {
            return true;
        }

        long slots = _slots == null ? InitialIndexSlots : (_mask + 1) * 2L;
        int barren = 0;
        while (true)
        {
            // Evicting may have made room meanwhile.
            if (_slots != null && (_count + 1) * 4L <= (_mask + 1) * 3L)
            {
                return true;
            }

            if (TryResize(slots))
            {
                return true;
            }

            if (!FreeSomething(ref barren))
            {
                RoomNeeded = slots * sizeof(ulong);
                return false;
            }
        }
    }

    private bool TryResize(long slotCount)
    {
        ulong* slots = (ulong*)_generation.TryAllocateTable(slotCount * sizeof(ulong), out LedgerBlock indexBlock, out long indexHeld);
        if (slots == null)
        {
            return false;
        }

        long ghostCount = slotCount / 2;
        uint* ghost = (uint*)_generation.TryAllocateTable(ghostCount * sizeof(uint), out LedgerBlock ghostBlock, out long ghostHeld);
        if (ghost == null)
        {
            _generation.FreeBlock(indexBlock, indexHeld);
            return false;
        }

        int mask = (int)(slotCount - 1);
        if (_slots != null)
        {
            for (int i = 0; i <= _mask; i++)
            {
                ulong value = _slots[i];
                if (value != 0)
                {
                    uint hash = CacheEntry.Hash(EntryOf(value, out _));
                    int j = (int)hash & mask;
                    while (slots[j] != 0)
                    {
                        j = (j + 1) & mask;
                    }

                    slots[j] = value;
                }
            }

            _generation.FreeBlock(_indexBlock, _indexHeld);
            _generation.FreeBlock(_ghostBlock, _ghostHeld);
        }

        _slots = slots;
        _mask = mask;
        _indexBlock = indexBlock;
        _indexHeld = indexHeld;
        _ghost = ghost;
        _ghostMask = (int)(ghostCount - 1);
        _ghostBlock = ghostBlock;
        _ghostHeld = ghostHeld;
        return true;
    }

    private void Insert(ulong location, uint hash)
    {
        int i = (int)hash & _mask;
        while (_slots[i] != 0)
        {
            i = (i + 1) & _mask;
        }

        _slots[i] = location;
    }

    // Backward-shift deletion: each following entry of the run moves back into the hole unless
    // its home slot lies between the hole and where it sits.
    private void RemoveSlot(int slot)
    {
        int hole = slot;
        int i = slot;
        while (true)
        {
            i = (i + 1) & _mask;
            ulong value = _slots[i];
            if (value == 0)
            {
                break;
            }

            int home = (int)CacheEntry.Hash(EntryOf(value, out _)) & _mask;
            bool stays = hole <= i ? home > hole && home <= i : home > hole || home <= i;
            if (!stays)
            {
                _slots[hole] = value;
                hole = i;
            }
        }

        _slots[hole] = 0;
    }

    /// <summary>The indexed entries whose slot's reach hint is not where their value ends now (tests: 0 always). Under <see cref="Gate"/>.</summary>
    internal int StaleReachHints()
    {
        int stale = 0;
        for (int i = 0; _slots != null && i <= _mask; i++)
        {
            ulong value = _slots[i];
            if (value != 0 && (int)((value >> ReachShift) & ReachMask) != CacheEntry.LastLine(EntryOf(value, out _)))
            {
                stale++;
            }
        }

        return stale;
    }

    private int SlotOf(ushort segmentId, int offset, uint hash)
    {
        ulong location = Pack(0, segmentId, offset) & LocationMask;
        int i = (int)hash & _mask;
        while (true)
        {
            ulong value = _slots[i];
            if (value == 0)
            {
                // Every live entry of a segment is indexed; reaching an empty slot is a bug, not bad input.
                throw new InvalidOperationException("NativeCache: a live entry of a segment is missing from its shard's index.");
            }

            if ((value & LocationMask) == location)
            {
                return i;
            }

            i = (i + 1) & _mask;
        }
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private byte* EntryOf(ulong value, out CacheSegment segment)
    {
        segment = _segments[(int)((value >> 32) & 0xFFFF)]!;
        return segment.Pointer + ((value & OffsetMask) << 3);
    }

    // The slot of the entry at `offset` of segment `segmentId`: its location, its tag, and how many cache
    // lines past its first its value ends, so a lookup can fetch the value's end with the header.
    private static ulong Pack(ushort tag, ushort segmentId, int offset, byte* entry) =>
        Pack(tag, segmentId, offset) | ((ulong)CacheEntry.LastLine(entry) << ReachShift);

    private static ulong Pack(ushort tag, ushort segmentId, int offset) =>
        ((ulong)tag << 48) | ((ulong)segmentId << 32) | (uint)(offset >> 3);

    // Asks for the lines of a candidate entry a read needs besides the header's: the next (the key and the
    // value's start often reach it) and the value's last, so they arrive with the header rather than after
    // it. A prefetch never faults, so a slot whose reach is out of date costs a wasted fetch, nothing more.
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void Prefetch(byte* entry, ulong value)
    {
        if (Sse.IsSupported)
        {
            int reach = (int)((value >> ReachShift) & ReachMask);
            if (reach > 1)
            {
                Sse.Prefetch0(entry + CacheEntry.LineBytes);
            }

            Sse.Prefetch0(entry + (reach * CacheEntry.LineBytes));
        }
    }
}
