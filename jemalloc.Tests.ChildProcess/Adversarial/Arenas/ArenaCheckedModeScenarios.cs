using jemalloc.ArenaBooks;
using jemalloc.Ledger;
using static jemalloc.Tests.ChildProcess.Adversarial.ScenarioHelpers;

namespace jemalloc.Tests.ChildProcess.Adversarial;

/// <summary>
/// Failure class: checked mode's detection in a <see cref="JemArena"/> (run with
/// <c>JEMALLOC_NET_CHECKED=1</c>): memory freed in an arena, one structure at a time or by
/// <see cref="JemArena.Reset"/>, is poisoned (0xDB) and held back, so a span kept from before and an
/// indexer racing the reset read poison or throw, never the data of a structure allocated afterwards,
/// and a write through them is reported instead of landing in a live structure.
/// </summary>
internal static class ArenaCheckedModeScenarios
{
    internal const string CheckedArenaFree = "checked-arena-free";
    internal const string CheckedArenaReset = "checked-arena-reset";
    internal const string CheckedArenaResetUntrackedRaw = "checked-arena-reset-untracked-raw";
    internal const string CheckedArenaDisposeQuarantined = "checked-arena-dispose-quarantined";
    internal const string CheckedArenaResetRacingIndexer = "checked-arena-reset-racing-indexer";
    internal const string CheckedArenaDisposeRacingIndexer = "checked-arena-dispose-racing-indexer";
    internal const string CheckedUnownedArenaMallctlReset = "checked-unowned-arena-mallctl-reset";

    internal static void Register(Dictionary<string, Action> all)
    {
        all[CheckedArenaFree] = ArenaFree;
        all[CheckedArenaReset] = ArenaReset;
        all[CheckedArenaResetUntrackedRaw] = ResetWithUntrackedRaw;
        all[CheckedArenaDisposeQuarantined] = DisposeWithQuarantinedBlocks;
        all[CheckedArenaResetRacingIndexer] = RacingIndexerVsReset;
        all[CheckedArenaDisposeRacingIndexer] = RacingIndexerVsDispose;
        all[CheckedUnownedArenaMallctlReset] = UnownedArenaMallctlReset;
    }

    private const int Live = 0x11111111;
    private const int Victim = 0x22222222;
    private const int Poison = unchecked((int)0xDBDBDBDB);
    private const byte Old = 0x5A;
    private const byte VictimByte = 0x77;
    private const int Size = 256;
    private static readonly TimeSpan Budget = TimeSpan.FromSeconds(2);

    /// <summary>
    /// An arena made with <c>arenas.create</c> (no <see cref="JemArena"/>) whose freed structures the
    /// quarantine holds, reset and destroyed through mallctl once no structure is live in it: the
    /// quarantine gives the blocks up first, so none is freed twice.
    /// </summary>
    private static void UnownedArenaMallctlReset()
    {
        Check.True(AllocationLedger.CheckedMode, "JEMALLOC_NET_CHECKED=1 turns checked mode on");
        uint unowned = MallctlKeys.Arenas.Create.Get();
        var options = new AllocationOptions(MallocxFlags.Arena(unowned));
        long quarantined = AllocationLedger.QuarantinedBytes;
        for (int round = 0; round < 8; round++)
        {
            for (int i = 0; i < 32; i++)
            {
                new SafeArray<byte>(Size, Old, options).Dispose();
            }

            Check.True(AllocationLedger.QuarantinedBytes >= quarantined + 32 * Size, $"round {round}: frees in the arena are quarantined");
            Check.NoThrow($"round {round}: the mallctl reset runs with no structure live", () => MallctlKeys.Arena(unowned).Reset.Run());
            Check.Equal(quarantined, AllocationLedger.QuarantinedBytes, $"round {round}: the reset took the arena's blocks out of the quarantine first");
            var arrays = new List<SafeArray<byte>>();
            for (int i = 0; i < 64; i++)
            {
                arrays.Add(new SafeArray<byte>(Size, VictimByte, options));
            }

            Check.True(arrays.All(a => CountNot(a.ToArray(), VictimByte) == 0), $"round {round}: every new array holds its own data");
            arrays.ForEach(a => a.Dispose());
        }

        Check.NoThrow("the mallctl destroy runs with no structure live", () => MallctlKeys.Arena(unowned).Destroy.Run());
        Check.Equal(quarantined, AllocationLedger.QuarantinedBytes, "the destroy took the arena's blocks out of the quarantine first");
        AllocationLedger.FlushQuarantine();
    }

    /// <summary>
    /// A structure freed in an arena is poisoned and held: a span kept past its lease reads 0xDB even
    /// after new structures of its size were made in the arena, and a write through it is reported
    /// when the quarantine lets the block go; the new structures keep their data.
    /// </summary>
    private static void ArenaFree()
    {
        Check.True(AllocationLedger.CheckedMode, "JEMALLOC_NET_CHECKED=1 turns checked mode on");
        using var arena = new JemArena();
        List<UseAfterFreeEventArgs> reports = Watch();
        foreach (string kind in new[] { "FixedBuffer", "SafeArray", "HugeArray" })
        {
            Stale stale = MakeStale(kind, arena);
            stale.Free();
            List<Action> victims = MakeVictims(arena, out Func<bool> victimsIntact);
            ExpectPoisonAndReport(kind + " freed in an arena", stale, victimsIntact, reports);
            victims.ForEach(free => free());
        }
    }

    /// <summary>
    /// As <see cref="ArenaFree"/> with <see cref="JemArena.Reset"/> freeing the structures and a raw
    /// allocation: everything the reset freed reads 0xDB, the arena's next allocations do not get it,
    /// and the reset leaves the arena empty in its books.
    /// </summary>
    private static unsafe void ArenaReset()
    {
        Check.True(AllocationLedger.CheckedMode, "JEMALLOC_NET_CHECKED=1 turns checked mode on");
        using var arena = new JemArena();
        List<UseAfterFreeEventArgs> reports = Watch();
        foreach (string kind in new[] { "FixedBuffer", "SafeArray", "HugeArray" })
        {
            Stale stale = MakeStale(kind, arena);
            byte* raw = (byte*)arena.Allocate(Size);
            new Span<byte>(raw, Size).Fill(Old);
            long quarantined = AllocationLedger.QuarantinedBytes;

            arena.Reset();
            Check.Equal(0L, arena.UsedBytes, $"{kind}: the reset empties the arena's books");
            Check.True(AllocationLedger.QuarantinedBytes >= quarantined + 2 * Size, $"{kind}: the reset put the structure and the raw block in the quarantine", $"{AllocationLedger.QuarantinedBytes - quarantined} bytes came in");
            Check.Throws<ObjectDisposedException>($"{kind}: the reset invalidated the structure", stale.Touch);

            List<Action> victims = MakeVictims(arena, out Func<bool> victimsIntact);
            // The raw pointer dangles (its use is the user's bug), but checked mode still holds its block.
            Check.Equal(0L, CountNot(new ReadOnlySpan<byte>(raw, Size), (byte)0xDB), $"{kind}: a raw allocation the reset freed reads poison, not a new structure's data");
            ExpectPoisonAndReport(kind + " reset with its arena", stale, victimsIntact, reports);
            victims.ForEach(free => free());
        }
    }

    /// <summary>
    /// A raw allocation made while checked mode was off cannot be freed one by one, so the reset
    /// resets the arena: its structures are poisoned first, and the blocks the quarantine held in the
    /// arena are freed before the reset (never a second time after it). The next reset, with no such
    /// raw allocation left, holds the memory again.
    /// </summary>
    private static unsafe void ResetWithUntrackedRaw()
    {
        Check.True(AllocationLedger.CheckedMode, "JEMALLOC_NET_CHECKED=1 turns checked mode on");
        using var arena = new JemArena();
        AllocationLedger.CheckedMode = false;
        _ = arena.Allocate(64);
        AllocationLedger.CheckedMode = true;
        long quarantined = AllocationLedger.QuarantinedBytes;

        // A block of the arena in the quarantine, which the arena's reset would free a second time.
        new SafeArray<byte>(Size, Old, arena.Options).Dispose();
        Check.Equal(quarantined + Size, AllocationLedger.QuarantinedBytes, "a free in the arena is quarantined");
        Stale stale = MakeStale("SafeArray", arena);

        arena.Reset();
        Check.Equal(0L, CountNot(stale.Span, (byte)0xDB), "the reset of the arena poisoned the structure before freeing it");
        Check.Equal(quarantined, AllocationLedger.QuarantinedBytes, "the reset took the arena's blocks out of the quarantine first");
        Check.Equal(0L, arena.UsedBytes, "the reset emptied the arena's books");

        // The freed memory goes round the arena and the quarantine: a double free would show here.
        for (int round = 0; round < 4; round++)
        {
            var arrays = new List<SafeArray<byte>>();
            for (int i = 0; i < 64; i++)
            {
                arrays.Add(new SafeArray<byte>(Size, VictimByte, arena.Options));
            }

            Check.True(arrays.All(a => CountNot(a.ToArray(), VictimByte) == 0), $"round {round}: every new array holds its own data");
            arrays.ForEach(a => a.Dispose());
            AllocationLedger.FlushQuarantine();
        }

        Stale held = MakeStale("SafeArray", arena);
        arena.Reset();
        List<Action> victims = MakeVictims(arena, out Func<bool> victimsIntact);
        ExpectPoisonAndReport("after the untracked raw allocation went with the reset", held, victimsIntact, Watch());
        victims.ForEach(free => free());
    }

    /// <summary>
    /// In checked mode an arena's <see cref="JemArena.Dispose"/> follows <see cref="JemArena.Reset"/>'s
    /// rule: its structures (freed ones and live ones) are poisoned and held in the quarantine, and the
    /// jemalloc arena is destroyed only once the quarantine has let all of them go. A raw pointer read
    /// after the dispose, as an access racing it would, reads poison: never unmapped memory (a crash)
    /// or memory jemalloc gave to someone else. Flushing the quarantine then destroys the arenas.
    /// </summary>
    private static unsafe void DisposeWithQuarantinedBlocks()
    {
        Check.True(AllocationLedger.CheckedMode, "JEMALLOC_NET_CHECKED=1 turns checked mode on");
        long quarantined = AllocationLedger.QuarantinedBytes;
        var indices = new List<uint>();
        for (int round = 0; round < 8; round++)
        {
            var arena = new JemArena();
            indices.Add(arena.Index);
            var freed = new List<nint>();
            for (int i = 0; i < 32; i++)
            {
                var array = new SafeArray<byte>(Size, Old, arena.Options);
                freed.Add(PointerOf(array));
                array.Dispose();
            }

            var live = new SafeArray<byte>(Size, Old, arena.Options);
            nint livePointer = PointerOf(live);
            Check.True(AllocationLedger.QuarantinedBytes >= quarantined + 32 * Size, $"round {round}: the frees in the arena are quarantined");
            arena.Dispose();
            Check.True(arena.IsDisposed, $"round {round}: the arena says it is disposed");
            Check.Throws<ObjectDisposedException>($"round {round}: the arena refuses new structures", () => new SafeArray<byte>(Size, Old, arena.Options).Dispose());
            Check.Throws<ObjectDisposedException>($"round {round}: the dispose invalidated the live array", () => _ = live[0]);
            Check.True(AllocationLedger.QuarantinedBytes >= quarantined + 33 * Size, $"round {round}: the dispose left the arena's blocks, the live array's too, in the quarantine");

            // What an access that raced the dispose would read, after it.
            int notPoison = CountNotPoison(livePointer, Size);
            foreach (nint pointer in freed)
            {
                notPoison += CountNotPoison(pointer, Size);
            }

            Check.Equal(0, notPoison, $"round {round}: bytes of the disposed arena's structures that do not read poison");
            live.Dispose();
        }

        Check.True(Quarantine.PendingDestroyCount >= 8, "the arenas wait for the quarantine to be given back", $"{Quarantine.PendingDestroyCount} waiting");
        Check.True(indices.All(index => !ArenaPool.Holds(index)), "no arena is pooled while its blocks are quarantined");
        AllocationLedger.FlushQuarantine();
        Check.Equal(0, Quarantine.PendingDestroyCount, "arenas still waiting after the quarantine was flushed");

        // Given back: reset and kept for the next JemArena, or destroyed when the pool is full.
        Check.True(indices.All(index => ArenaPool.Holds(index) || !Mallctl.ArenaDirectory.Exists(index)), "flushing the quarantine gave the arenas back (pooled or destroyed)");
        MallctlKeys.Epoch.Set(1);
        foreach (uint index in indices.Where(ArenaPool.Holds))
        {
            ArenaKeys keys = MallctlKeys.Arena(index);
            Check.Equal(0L, (long)keys.SmallAllocated.Get() + (long)keys.LargeAllocated.Get(), $"bytes still allocated in pooled arena {index}");
        }
        Check.Equal(0L, AllocationLedger.QuarantinedBytes, "bytes left in the quarantine after the flush");
    }

    /// <summary>
    /// Indexers of an arena's structures, without a lease, race the arena's <see cref="JemArena.Dispose"/>;
    /// right after it new structures (in a new arena and outside any) are filled with a sentinel. A
    /// racing read returns the structure's value or poison, or throws; it never crashes on unmapped
    /// memory and never reads the sentinel.
    /// </summary>
    private static void RacingIndexerVsDispose()
    {
        Check.True(AllocationLedger.CheckedMode, "JEMALLOC_NET_CHECKED=1 turns checked mode on");
        const int n = 1024;
        long disposes = 0, poisonReads = 0, disposedSeen = 0, reads = 0;
        long[] counts = Check.RaceUntil("racing indexers vs arena dispose (checked)", Budget, firstBodyAtLeast: 200, int.MaxValue,
            i =>
            {
                var arena = new JemArena();
                var array = new SafeArray<int>(n, Live, arena.Options);
                var huge = new HugeArray<int>(n, Live, arena.Options);
                s_array = array;
                s_huge = huge;
                // Long enough for the readers to come through the live structures first.
                Thread.SpinWait(5000 + (i % 100) * 50);
                Check.UntilNotRefused(arena.Dispose);
                disposes++;
                using var newArena = new JemArena();
                var victim = new SafeArray<int>(n, Victim, newArena.Options);
                var victimHuge = new HugeArray<int>(n, Victim);
                Thread.SpinWait(500);
                victim.Dispose();
                victimHuge.Dispose();
                array.Dispose();
                huge.Dispose();
            },
            i =>
            {
                SafeArray<int>? a = s_array;
                HugeArray<int>? h = s_huge;
                if (a is null || h is null)
                {
                    return;
                }

                for (int j = 0; j < n; j += 7)
                {
                    Read(() => a[j]);
                    Read(() => h[j]);
                }
            });
        s_array = null;
        s_huge = null;
        AllocationLedger.FlushQuarantine();
        Check.Info($"INFO disposes={disposes} reads={reads} poison-reads={poisonReads} invalidated-seen={disposedSeen} waiting-destroys={Quarantine.PendingDestroyCount}");
        Check.True(counts[1] > 0 && reads > 0, "the readers ran", $"reader loops={counts[1]}");
        Check.True(disposes > 100, "enough disposes ran", $"only {disposes}");
        Check.True(disposedSeen + poisonReads > 0, "the indexers met the disposes", "no access ever saw a disposed arena's structure: the race did not happen");
        Check.Equal(0, Quarantine.PendingDestroyCount, "arenas still waiting after the quarantine was flushed");

        void Read(Func<int> read)
        {
            try
            {
                int value = read();
                Interlocked.Increment(ref reads);
                if (value == Poison)
                {
                    Interlocked.Increment(ref poisonReads);
                }
                else if (value != Live)
                {
                    Check.Fail("checked arena dispose", $"a read racing the dispose returned 0x{value:X8}: {(value == Victim ? "a structure allocated after the dispose" : "neither the structure's value nor poison")}");
                }
            }
            catch (ObjectDisposedException)
            {
                Interlocked.Increment(ref disposedSeen);
            }
        }
    }

    private static unsafe nint PointerOf(SafeArray<byte> array)
    {
        using MemoryLease<byte> lease = array.Lease();
        return (nint)lease.Pointer;
    }

    private static unsafe int CountNotPoison(nint pointer, int length)
    {
        int count = 0;
        for (int i = 0; i < length; i++)
        {
            if (((byte*)pointer)[i] != Quarantine.Poison)
            {
                count++;
            }
        }

        return count;
    }

    private static volatile FixedBufferBox? s_buffer;
    private static volatile SafeArray<int>? s_array;
    private static volatile HugeArray<int>? s_huge;

    /// <summary>
    /// Indexers of an arena's structures, without a lease (the race the contract leaves to the user),
    /// race the arena's reset; right after each reset new structures in the arena are filled with a
    /// sentinel. A racing read returns the structure's value or poison, or throws, and never the
    /// sentinel; a racing write never changes a new structure.
    /// </summary>
    private static void RacingIndexerVsReset()
    {
        Check.True(AllocationLedger.CheckedMode, "JEMALLOC_NET_CHECKED=1 turns checked mode on");
        const int n = 64;
        using var arena = new JemArena();
        long resets = 0, refused = 0, poisonReads = 0, disposedSeen = 0, reads = 0, writes = 0;
        long before = AllocationLedger.UseAfterFreeWritesDetected;
        long[] counts = Check.RaceUntil("racing indexers vs arena reset (checked)", Budget, firstBodyAtLeast: 300, int.MaxValue,
            i =>
            {
                var buffer = new FixedBuffer<int>(n, Live, arena.Options);
                var array = new SafeArray<int>(n, Live, arena.Options);
                var huge = new HugeArray<int>(n, Live, arena.Options);
                s_buffer = new FixedBufferBox(buffer);
                s_array = array;
                s_huge = huge;
                Thread.SpinWait(50 + i % 100);
                refused += Check.UntilNotRefused(arena.Reset);
                resets++;

                // New structures at once: without checked mode's hold they would get the reset memory.
                var victim = new FixedBuffer<int>(n, Victim, arena.Options);
                var victimArray = new SafeArray<int>(n, Victim, arena.Options);
                var victimHuge = new HugeArray<int>(n, Victim, arena.Options);
                // Long enough for the racing threads to go through them.
                Thread.SpinWait(1000);
                if (CountNot(victim.ToArray(), Victim) != 0 || CountNot(victimArray.ToArray(), Victim) != 0 || CountNot(victimHuge, Victim) != 0)
                {
                    Check.Fail("checked arena reset", $"iteration {i}: a racing write through a reset structure landed in a live one");
                }

                victim.Free();
                victimArray.Dispose();
                victimHuge.Dispose();
                // The reset structures: disposing them frees nothing (the FixedBuffer, a struct, was invalidated with them).
                array.Dispose();
                huge.Dispose();
            },
            i =>
            {
                FixedBufferBox? box = s_buffer;
                SafeArray<int>? a = s_array;
                HugeArray<int>? h = s_huge;
                if (box is null || a is null || h is null)
                {
                    return;
                }

                for (int j = 0; j < n; j++)
                {
                    Read(() => box.Buffer[j]);
                    Read(() => a[j]);
                    Read(() => h[j]);
                }
            },
            i =>
            {
                FixedBufferBox? box = s_buffer;
                SafeArray<int>? a = s_array;
                HugeArray<int>? h = s_huge;
                if (box is null || a is null || h is null)
                {
                    return;
                }

                FixedBuffer<int> b = box.Buffer;
                for (int j = 0; j < n; j++)
                {
                    Write(() => b[j] = Live);
                    Write(() => a[j] = Live);
                    Write(() => h[j] = Live);
                }
            });
        s_buffer = null;
        s_array = null;
        s_huge = null;
        AllocationLedger.FlushQuarantine();
        Check.Info($"INFO resets={resets} refused={refused} reads={reads} writes={writes} poison-reads={poisonReads} invalidated-seen={disposedSeen} writes-detected={AllocationLedger.UseAfterFreeWritesDetected - before}");
        Check.True(counts[1] > 0 && counts[2] > 0 && reads + writes > 0, "the readers and writers ran", $"reader loops={counts[1]} writer loops={counts[2]}");
        Check.True(resets > 100, "enough resets ran", $"only {resets}");
        Check.True(disposedSeen + poisonReads > 0, "the indexers met the resets", "no access ever saw a reset structure: the race did not happen");

        void Read(Func<int> read)
        {
            try
            {
                int value = read();
                Interlocked.Increment(ref reads);
                if (value == Poison)
                {
                    Interlocked.Increment(ref poisonReads);
                }
                else if (value != Live)
                {
                    Check.Fail("checked arena reset", $"a read racing the reset returned 0x{value:X8}: {(value == Victim ? "a structure allocated after the reset" : "neither the structure's value nor poison")}");
                }
            }
            catch (ObjectDisposedException)
            {
                Interlocked.Increment(ref disposedSeen);
            }
        }

        void Write(Action write)
        {
            try
            {
                write();
                Interlocked.Increment(ref writes);
            }
            catch (ObjectDisposedException)
            {
                Interlocked.Increment(ref disposedSeen);
            }
        }
    }

    private static List<UseAfterFreeEventArgs> Watch()
    {
        var reports = new List<UseAfterFreeEventArgs>();
        AllocationLedger.UseAfterFreeDetected += (_, e) => { lock (reports) { reports.Add(e); } };
        return reports;
    }

    // A structure of the kind named, filled with Old, with a span kept past its lease's Dispose.
    private static Stale MakeStale(string kind, JemArena arena)
    {
        switch (kind)
        {
            case "FixedBuffer":
            {
                var buffer = new FixedBuffer<byte>(Size, Old, arena.Options);
                MemoryLease<byte> lease = buffer.Lease();
                Stale stale = new(lease.Span, () => buffer.Free(), () => _ = buffer[0]);
                lease.Dispose();
                return stale;
            }

            case "SafeArray":
            {
                var array = new SafeArray<byte>(Size, Old, arena.Options);
                MemoryLease<byte> lease = array.Lease();
                Stale stale = new(lease.Span, array.Dispose, () => _ = array[0]);
                lease.Dispose();
                return stale;
            }

            default:
            {
                var huge = new HugeArray<byte>(Size, Old, arena.Options);
                MemoryLease<byte> lease = huge.Lease();
                Stale stale = new(lease.Span, huge.Dispose, () => _ = huge[0]);
                lease.Dispose();
                return stale;
            }
        }
    }

    // Victims of the stale structure's size in the same arena, filled with VictimByte, made at once
    // after the free: jemalloc would hand them the freed block first.
    private static List<Action> MakeVictims(JemArena arena, out Func<bool> intact)
    {
        var buffers = new List<FixedBuffer<byte>>();
        var arrays = new List<SafeArray<byte>>();
        var huges = new List<HugeArray<byte>>();
        for (int v = 0; v < 16; v++)
        {
            buffers.Add(new FixedBuffer<byte>(Size, VictimByte, arena.Options));
            arrays.Add(new SafeArray<byte>(Size, VictimByte, arena.Options));
            huges.Add(new HugeArray<byte>(Size, VictimByte, arena.Options));
        }

        intact = () =>
            buffers.All(b => CountNot(b.ToArray(), VictimByte) == 0) &&
            arrays.All(a => CountNot(a.ToArray(), VictimByte) == 0) &&
            huges.All(h => CountNot(h, VictimByte) == 0);
        return
        [
            () => buffers.ForEach(b => b.Free()),
            () => arrays.ForEach(a => a.Dispose()),
            () => huges.ForEach(h => h.Dispose()),
        ];
    }

    // The stale span reads poison with the victims made; a write through it reaches no victim and is
    // reported when the quarantine lets the block go.
    private static void ExpectPoisonAndReport(string what, Stale stale, Func<bool> victimsIntact, List<UseAfterFreeEventArgs> reports)
    {
        Check.Equal(0L, CountNot(stale.Span, (byte)0xDB), $"{what}: a span kept from before reads poison, not the old data or a new structure's");
        int reported;
        lock (reports)
        {
            reported = reports.Count;
        }

        long detected = AllocationLedger.UseAfterFreeWritesDetected;
        stale.Span[10] = 1;
        Check.True(victimsIntact(), $"{what}: the write through the stale span reached no structure made after the free");
        AllocationLedger.FlushQuarantine();
        Check.Equal(detected + 1, AllocationLedger.UseAfterFreeWritesDetected, $"{what}: the write through the stale span is counted");
        lock (reports)
        {
            Check.Equal(reported + 1, reports.Count, $"{what}: the write raised UseAfterFreeDetected");
            if (reports.Count > reported)
            {
                Check.Equal(10L, reports[^1].Offset, $"{what}: reported offset");
                Check.Equal((nuint)Size, reports[^1].Size, $"{what}: reported size");
            }
        }
    }

    // A lease's span kept past the lease's Dispose (the misuse under test): its address and length.
    private sealed unsafe class Stale(Span<byte> span, Action free, Action touch)
    {
        private readonly nint _address = (nint)System.Runtime.CompilerServices.Unsafe.AsPointer(ref span[0]);

        internal Span<byte> Span => new((void*)_address, Size);

        internal void Free() => free();

        internal void Touch() => touch();
    }

    // A FixedBuffer is a struct: boxed so that a racing thread reads one published value whole.
    private sealed class FixedBufferBox(FixedBuffer<int> buffer)
    {
        internal FixedBuffer<int> Buffer { get; } = buffer;
    }
}
