namespace jemalloc.Tests.ChildProcess.Adversarial;

/// <summary>
/// Failure class: an arena reset under structures in use, for <see cref="JemArena"/> itself: a Reset
/// while a buffer is acquired or an array leased is refused and resets nothing; Reset racing Dispose,
/// allocation (while the ledger grows) and Acquire/Lease on other threads neither fails spuriously nor
/// hangs, and never leaves a structure on freed memory; a mallctl reset of an arena the library does not
/// own never frees a structure allocated meanwhile.
/// </summary>
internal static class ArenaResetScenarios
{
    internal const string MisuseResetWhileInUse = "misuse-reset-while-in-use";
    internal const string RaceResetVsDispose = "race-reset-vs-dispose";
    internal const string RaceResetVsAllocation = "race-reset-vs-allocation";
    internal const string RaceResetVsAllocationPaced = "race-reset-vs-allocation-paced";
    internal const string RaceResetVsAcquire = "race-reset-vs-acquire";
    internal const string RaceUnownedArenaResetVsAllocation = "race-unowned-arena-reset-vs-allocation";

    internal static void Register(Dictionary<string, Action> all)
    {
        all[MisuseResetWhileInUse] = ResetWhileInUse;
        all[RaceResetVsDispose] = ResetVsDispose;
        all[RaceResetVsAllocation] = () => ResetVsAllocation(pause: false);
        all[RaceResetVsAllocationPaced] = () => ResetVsAllocation(pause: true);
        all[RaceResetVsAcquire] = ResetVsAcquire;
        all[RaceUnownedArenaResetVsAllocation] = UnownedArenaResetVsAllocation;
    }

    private static readonly TimeSpan Budget = TimeSpan.FromSeconds(2);

    private static void ResetWhileInUse()
    {
        using var arena = new JemArena();
        FixedBuffer<int> buffer = arena.CreateBuffer<int>(4);
        SafeArray<int> array = arena.CreateArray<int>(4);
        buffer.Fill(1);
        array.Fill(2);

        buffer.Acquire();
        Check.ThrowsExactly<InvalidOperationException>("Reset while a buffer is acquired", arena.Reset);
        Check.True(buffer.IsValid && array.IsValid && buffer[0] == 1 && array[0] == 2, "nothing reset by a refused Reset");
        buffer.Release();

        using (MemoryLease<int> lease = array.Lease())
        {
            Check.ThrowsExactly<InvalidOperationException>("Reset while an array is leased", arena.Reset);
            Check.Equal(2, lease[3], "lease intact after refused Reset");
        }

        Check.True(buffer.IsValid && array.IsValid, "valid after refused resets");
        Check.NoThrow("Reset once released", arena.Reset);
        Check.True(!buffer.IsValid && !array.IsValid, "invalid after Reset");
        Check.NoThrow("Dispose an array the reset invalidated", array.Dispose);
    }

    // ---- JemArena.Reset vs Dispose of arrays in it

    private static void ResetVsDispose()
    {
        using var arena = new JemArena();
        long resets = 0, disposes = 0, invalidated = 0;
        Check.RaceUntilMet("reset vs dispose", Budget, () => Interlocked.Read(ref invalidated) > 0, int.MaxValue,
            i =>
            {
                SafeArray<int> array = arena.CreateArray<int>(64);
                try
                {
                    array[0] = i;
                    Thread.SpinWait(200); // live for a moment, so that resets meet live arrays
                }
                catch (ObjectDisposedException)
                {
                    // a reset invalidated it already
                }

                if (!array.IsValid)
                {
                    Interlocked.Increment(ref invalidated); // the Dispose below meets an array a reset invalidated
                }

                array.Dispose();
                disposes++;
            },
            i =>
            {
                SafeArray<int> array = arena.CreateArray<int>(1024);
                array.Dispose();
            },
            i =>
            {
                try
                {
                    arena.Reset();
                    resets++;
                }
                catch (InvalidOperationException e)
                {
                    Check.Fail("Reset", $"refused while other threads only created and disposed arrays (nothing acquired or leased): {e.GetType().Name}: {e.Message}");
                }

                Thread.Yield();
            });
        Check.Info($"INFO resets={resets} disposes={disposes} invalidated={invalidated}");
        Check.NoThrow("final Reset", arena.Reset);
        SafeArray<int> last = arena.CreateArray<int>(8);
        Check.NoThrow("Dispose after the race", last.Dispose);
        Check.True(resets > 10 && disposes > 100, "enough iterations ran", $"resets={resets} disposes={disposes}");
        Check.True(invalidated > 0, "resets met arrays about to be disposed", "no array was ever found invalidated by a reset: the race did not happen");
    }

    // ---- JemArena.Reset vs allocation in the arena, while the ledger grows

    private static void ResetVsAllocation(bool pause)
    {
        using var arena = new JemArena();
        long resets = 0, created = 0, invalidated = 0;
        var grown = new List<FixedBuffer<byte>>();
        Check.RaceUntilMet("reset vs allocation", Budget, () => Interlocked.Read(ref invalidated) > 0 && Interlocked.Read(ref resets) > 10, int.MaxValue,
            i =>
            {
                FixedBuffer<long> buffer = arena.CreateBuffer<long>(8);
                SafeArray<long> array = arena.CreateArray<long>(8);
                created++;
                try
                {
                    buffer[7] = i;
                    array[7] = i;
                    if (buffer[7] != i || array[7] != i)
                    {
                        Check.Fail("arena structure", $"read back {buffer[7]}/{array[7]}, wrote {i}, without an exception");
                    }

                    buffer.Free();
                }
                catch (ObjectDisposedException)
                {
                    Interlocked.Increment(ref invalidated);
                    Check.True(!buffer.IsValid || !array.IsValid, "an ObjectDisposedException means a reset invalidated it");
                }

                array.Dispose();
            },
            i =>
            {
                // Grows the ledger across new chunks of slots while the resets scan it.
                if (grown.Count < 600_000)
                {
                    for (int k = 0; k < 1000; k++)
                    {
                        grown.Add(new FixedBuffer<byte>(1));
                    }
                }
                else
                {
                    Thread.Sleep(1);
                }
            },
            i =>
            {
                try
                {
                    arena.Reset();
                    resets++;
                }
                catch (InvalidOperationException e)
                {
                    Check.Fail("Reset", $"refused while other threads only allocated: {e.GetType().Name}: {e.Message}");
                }

                if (pause)
                {
                    Thread.Sleep(1); // some work between resets
                }
            });
        Check.Info($"INFO resets={resets} created={created} invalidated={invalidated} ledger-grown-by={grown.Count}");
        foreach (FixedBuffer<byte> b in grown)
        {
            b.Free();
        }

        Check.NoThrow("final Reset", arena.Reset);
        SafeArray<int> last = arena.CreateArray<int>(8);
        Check.NoThrow("Dispose after the race", last.Dispose);
        Check.True(resets > 10, "enough resets ran", $"resets={resets}");
        Check.True(invalidated > 0, "resets met structures being used", "no structure was ever found invalidated by a reset: the race did not happen");
        Check.True(created > 100, "allocation in the arena progresses while another thread resets it",
            $"the allocating thread made {created} allocation(s) in {Budget.TotalSeconds} s while {resets} resets ran: starved at the arena's gate");
    }

    // ---- JemArena.Reset vs Acquire / Lease

    private static void ResetVsAcquire()
    {
        using var arena = new JemArena();
        FixedBuffer<int> buffer = arena.CreateBuffer<int>(4);
        SafeArray<int> array = arena.CreateArray<int>(4);
        long acquired = 0, refusedResets = 0, resets = 0, leased = 0, invalidated = 0;
        Check.RaceUntilMet("reset vs acquire", Budget,
            () => Interlocked.Read(ref refusedResets) > 0 && Interlocked.Read(ref invalidated) > 0 && Interlocked.Read(ref leased) > 0, int.MaxValue,
            i =>
            {
                try
                {
                    buffer.Acquire();
                }
                catch (ObjectDisposedException)
                {
                    if (buffer.IsValid)
                    {
                        Check.Fail("Acquire", "threw ObjectDisposedException on a live buffer (a reset that was refused was running)");
                    }

                    Interlocked.Increment(ref invalidated);
                    buffer = arena.CreateBuffer<int>(4);
                    return;
                }

                acquired++;
                // Acquired: no reset can take it now.
                buffer[1] = i;
                if (!buffer.IsValid || buffer[1] != i)
                {
                    Check.Fail("Acquire", "an acquired buffer was invalidated or changed by a reset");
                }

                buffer.Release();
            },
            i =>
            {
                try
                {
                    using MemoryLease<int> lease = array.Lease();
                    lease[2] = i;
                    if (lease[2] != i)
                    {
                        Check.Fail("Lease", "a leased array changed under its lease");
                    }

                    leased++;
                }
                catch (ObjectDisposedException)
                {
                    if (array.IsValid)
                    {
                        Check.Fail("Lease", "threw ObjectDisposedException on a live array");
                    }

                    Interlocked.Increment(ref invalidated);
                    array.Dispose();
                    array = arena.CreateArray<int>(4);
                }
            },
            i =>
            {
                try
                {
                    arena.Reset();
                    resets++;
                }
                catch (ObjectDisposedException e)
                {
                    Check.Fail("Reset", $"threw ObjectDisposedException on a live arena: {e.Message}");
                }
                catch (InvalidOperationException)
                {
                    refusedResets++; // acquired or leased: the documented refusal
                }
            });
        Check.Info($"INFO acquired={acquired} leased={leased} resets={resets} refused={refusedResets} invalidated={Interlocked.Read(ref invalidated)}");
        // The race happened only if every side ran and they met both ways: a reset refused by a hold,
        // and a structure found invalidated by a reset that went through.
        Check.True(acquired > 0 && leased > 0 && resets > 0, "every side of the race ran", $"acquired={acquired} leased={leased} resets={resets}");
        Check.True(refusedResets > 0, "resets met acquired or leased structures", "no reset was ever refused: the race did not happen");
        Check.True(Interlocked.Read(ref invalidated) > 0, "acquires and leases met reset structures", "no Acquire or Lease ever found its structure reset: the race did not happen");
        Check.NoThrow("final Reset", arena.Reset);
        Check.True(!buffer.IsValid && !array.IsValid, "the final reset invalidated both");
        array.Dispose();
    }

    // An arena made with arenas.create, no JemArena: the policy lets a mallctl reset through only when
    // the ledger has no structure in it, so a structure allocated between that check and jemalloc's
    // reset would keep a valid handle over freed memory (and be freed twice by its Dispose).
    private static void UnownedArenaResetVsAllocation()
    {
        uint unowned = MallctlKeys.Arenas.Create.Get();
        var options = new AllocationOptions(MallocxFlags.Arena(unowned));
        long aliased = 0;
        long[] counts = Check.Race("unowned arena reset vs allocation", TimeSpan.FromSeconds(2), 2_000_000,
            _ =>
            {
                var first = new SafeArray<long>(64, options);
                first.Fill(1);
                var second = new SafeArray<long>(64, options);
                second.Fill(2);
                if (first.VectorSum() != 64)
                {
                    aliased++;
                }

                first.Dispose();
                second.Dispose();
            },
            _ =>
            {
                try
                {
                    MallctlKeys.Arena(unowned).Reset.Run();
                }
                catch (MallctlException)
                {
                    // Refused while a structure is live in the arena: expected most of the time.
                }
            });
        Check.Info($"INFO {counts[0]} allocation rounds, {counts[1]} reset attempts");
        Check.Equal(0L, aliased, "live arrays aliased by a reset that slipped between the policy's check and jemalloc's reset");
        Check.True(counts[0] > 0 && counts[1] > 0, "both sides of the race ran");
    }
}
