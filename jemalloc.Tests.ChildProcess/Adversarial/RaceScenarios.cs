using System.Runtime.CompilerServices;

namespace jemalloc.Tests.ChildProcess.Adversarial;

/// <summary>
/// Races between the library's own operations and a concurrent Free / Dispose / Reset: every
/// operation either completes on the live memory or throws ObjectDisposedException; a free either
/// waits or refuses (InvalidOperationException "in use"); no operation ever reads or writes memory
/// that another structure has since received (the "victims", allocated right after each free so that
/// they reuse the block, must keep their contents). Bounded by iterations and time.
/// </summary>
internal static class RaceScenarios
{
    private const int Live = 0x11111111;
    private const int Victim = 0x22222222;
    private static readonly TimeSpan Budget = TimeSpan.FromSeconds(2);

    internal static void Register(Dictionary<string, Action> all)
    {
        all["race-free-vs-ops-fixedbuffer"] = FreeVsOpsFixedBuffer;
        all["race-dispose-vs-ops-safearray"] = () => DisposeVsOps(huge: false);
        all["race-dispose-vs-ops-hugearray"] = () => DisposeVsOps(huge: true);
        all["race-free-vs-enumeration"] = FreeVsEnumeration;
        all["race-reset-vs-dispose"] = ResetVsDispose;
        all["race-reset-vs-allocation"] = () => ResetVsAllocation(pause: false);
        all["race-reset-vs-allocation-paced"] = () => ResetVsAllocation(pause: true);
        all["race-reset-vs-acquire"] = ResetVsAcquire;
        all["race-fixedbuffer-copies"] = FixedBufferCopies;
        all["race-finalizer-vs-lease"] = FinalizerVsLease;
        all["race-unowned-arena-reset-vs-allocation"] = UnownedArenaResetVsAllocation;
    }

    // ---- FixedBuffer: Free vs Fill / ToArray / CopyTo / SequenceEqual / Vector* / enumeration / leases

    private static FixedBuffer<int> s_fixed;

    private static void FreeVsOpsFixedBuffer()
    {
        const int n = 256;
        int[] expected = Enumerable.Repeat(Live, n).ToArray();
        long frees = 0, refused = 0, disposedSeen = 0;
        Check.Race("free vs FixedBuffer operations", Budget, int.MaxValue,
            i =>
            {
                // Owner: publish a live buffer, let the operations at it, free it (retrying while an
                // operation holds it), then at once allocate victims of the same size, which reuse
                // the block, and check nobody wrote to them.
                var buffer = new FixedBuffer<int>(n);
                buffer.Fill(Live);
                s_fixed = buffer;
                Thread.SpinWait(50);
                refused += Check.UntilNotRefused(() => buffer.Free());
                frees++;

                var victim = new FixedBuffer<int>(n);
                victim.Fill(Victim);
                Thread.SpinWait(50);
                long bad = CountNot(victim.ToArray(), Victim);
                if (bad != 0)
                {
                    Check.Fail("FixedBuffer victim", $"iteration {i}: {bad} elements of a buffer allocated after the free were changed by an operation on the freed buffer");
                }

                victim.Free();
            },
            i => FixedOperation("ops thread A", s_fixed, i, expected, ref disposedSeen),
            i => FixedOperation("ops thread B", s_fixed, i + 3, expected, ref disposedSeen));
        Check.Info($"INFO frees={frees} refused-in-use={refused} operations-that-saw-disposed={disposedSeen}");
        Check.True(frees > 100, "enough iterations ran", $"only {frees} frees");
    }

    private static void FixedOperation(string who, FixedBuffer<int> b, int i, int[] expected, ref long disposedSeen)
    {
        try
        {
            int n = expected.Length;
            switch (i % 9)
            {
                case 0:
                    b.Fill(Live);
                    break;
                case 1:
                    Expect(who, "ToArray", CountNot(b.ToArray(), Live) == 0);
                    break;
                case 2:
                    var copy = new int[n];
                    b.CopyTo(copy);
                    Expect(who, "CopyTo", CountNot(copy, Live) == 0);
                    break;
                case 3:
                    Expect(who, "SequenceEqual", b.SequenceEqual(expected));
                    break;
                case 4:
                    Expect(who, "VectorSum", b.VectorSum() == unchecked(Live * n));
                    break;
                case 5:
                    Expect(who, "VectorMax/Min", b.VectorMax() == Live && b.VectorMin() == Live);
                    break;
                case 6:
                    // (Enumeration has its own scenario, race-free-vs-enumeration.)
                    Expect(who, "VectorAllLessThan", b.VectorAllLessThan(Live + 1));
                    break;
                case 7:
                    using (MemoryLease<int> lease = b.Lease())
                    {
                        Thread.SpinWait(20);
                        Expect(who, "lease span", CountNot(lease.Span, Live) == 0);
                    }

                    break;
                default:
                    b.CopyFrom(expected);
                    b.VectorAdd(0);
                    break;
            }
        }
        catch (ObjectDisposedException)
        {
            Interlocked.Increment(ref disposedSeen);
        }
    }

    // ---- SafeArray / HugeArray: Dispose vs the operations, Parallel* included

    private static volatile NativeBuffer<int>? s_array;

    private static void DisposeVsOps(bool huge)
    {
        int n = huge ? 1 << 19 : 512; // Parallel* split from 2^18 elements
        int[] expected = Enumerable.Repeat(Live, n).ToArray();
        long disposes = 0, refused = 0, disposedSeen = 0;
        NativeBuffer<int> Make() => huge ? new HugeArray<int>(n) : new SafeArray<int>(n);
        Check.RaceUntil($"dispose vs {(huge ? "HugeArray" : "SafeArray")} operations", Budget, firstBodyAtLeast: huge ? 20 : 200, int.MaxValue,
            i =>
            {
                NativeBuffer<int> array = Make();
                array.Fill(Live);
                s_array = array;
                Thread.SpinWait(huge ? 2000 : 50);
                refused += Check.UntilNotRefused(() => array.Dispose());
                disposes++;

                using NativeBuffer<int> victim = Make();
                victim.Fill(Victim);
                Thread.SpinWait(huge ? 2000 : 50);
                using (MemoryLease<int> lease = victim.Lease())
                {
                    long bad = 0;
                    foreach (Span<int> chunk in lease.GetChunks())
                    {
                        bad += CountNot(chunk, Victim);
                    }

                    if (bad != 0)
                    {
                        Check.Fail("array victim", $"iteration {i}: {bad} elements of an array allocated after the Dispose were changed by an operation on the disposed one");
                    }
                }
            },
            // A huge array's operations hold it long enough that two threads doing them back to
            // back leave the owner no moment to dispose it (its Dispose is refused while leased, as
            // the contract says): they pause between operations, as real readers would.
            i => { ArrayOperation("ops thread A", s_array, i, expected, huge, ref disposedSeen); PauseIf(huge); },
            i => { ArrayOperation("ops thread B", s_array, i + 5, expected, huge, ref disposedSeen); PauseIf(huge); });
        Check.Info($"INFO disposes={disposes} refused-in-use={refused} operations-that-saw-disposed={disposedSeen}");
        Check.True(disposes > (huge ? 1 : 100), "enough iterations ran", $"only {disposes} disposes");
        Check.True(disposedSeen > 0, "the operations met disposed arrays", "no operation ever saw a disposed array: the race did not happen");
    }

    private static void ArrayOperation(string who, NativeBuffer<int>? a, int i, int[] expected, bool huge, ref long disposedSeen)
    {
        if (a is null)
        {
            return;
        }

        try
        {
            int n = expected.Length;
            switch (i % 10)
            {
                case 0:
                    a.Fill(Live);
                    break;
                case 1:
                    if (a is SafeArray<int> safe)
                    {
                        Expect(who, "ToArray", CountNot(safe.ToArray(), Live) == 0);
                    }
                    else if (a is HugeArray<int> big)
                    {
                        var part = new int[4096];
                        big.CopyTo(part, n - part.Length);
                        Expect(who, "HugeArray.CopyTo", CountNot(part, Live) == 0);
                    }

                    break;
                case 2:
                    if (a is SafeArray<int> s2)
                    {
                        Expect(who, "SequenceEqual", s2.SequenceEqual(expected));
                    }
                    else if (a is HugeArray<int> h2)
                    {
                        h2.CopyFrom(expected.AsSpan(0, 4096), 0);
                    }

                    break;
                case 3:
                    Expect(who, "VectorSum", a.VectorSum() == unchecked(Live * n));
                    break;
                case 4:
                    if (a is HugeArray<int> h4)
                    {
                        Expect(who, "ParallelVectorSum", h4.ParallelVectorSum() == unchecked(Live * n));
                    }
                    else
                    {
                        Expect(who, "VectorMax", a.VectorMax() == Live);
                    }

                    break;
                case 5:
                    if (a is HugeArray<int> h5)
                    {
                        h5.ParallelVectorFill(Live);
                        Expect(who, "ParallelVectorMin/Max", h5.ParallelVectorMin() == Live && h5.ParallelVectorMax() == Live);
                    }
                    else
                    {
                        a.VectorFill(Live);
                    }

                    break;
                case 6:
                    // (Enumeration has its own scenario, race-free-vs-enumeration.)
                    a.Fill(Live);
                    break;
                case 7:
                    using (MemoryLease<int> lease = a.Lease())
                    {
                        Thread.SpinWait(20);
                        long bad = 0;
                        foreach (Span<int> chunk in lease.GetChunks())
                        {
                            bad += CountNot(chunk, Live);
                        }

                        Expect(who, "lease span", bad == 0);
                    }

                    break;
                case 8:
                    if (a is HugeArray<int> h8)
                    {
                        h8.ParallelVectorAdd(0);
                        h8.ParallelVectorMultiply(1);
                    }
                    else
                    {
                        a.VectorAdd(0);
                        a.VectorMultiply(1);
                    }

                    break;
                default:
                    Expect(who, "VectorAllLessThan", a.VectorAllLessThan(Live + 1));
                    break;
            }
        }
        catch (ObjectDisposedException)
        {
            Interlocked.Increment(ref disposedSeen);
        }
        catch (AggregateException e) when (e.InnerExceptions.All(x => x is ObjectDisposedException))
        {
            Check.Fail(who, $"a Parallel* operation wrapped its ObjectDisposedException in an AggregateException: {e.Message}");
        }
    }

    // ---- Free / Dispose vs enumeration alone (enumerators are library operations: the contract makes them safe)

    private static FixedBuffer<int> s_enumerated;
    private static volatile SafeArray<int>? s_enumeratedArray;

    private static void FreeVsEnumeration()
    {
        const int n = 64;
        long wrong = 0, disposedSeen = 0, frees = 0, refused = 0;
        long[] counts = Check.RaceUntilMet("free vs enumeration", TimeSpan.FromSeconds(3), () => Interlocked.Read(ref disposedSeen) > 0, int.MaxValue,
            i =>
            {
                var buffer = new FixedBuffer<int>(n);
                var array = new SafeArray<int>(n);
                buffer.Fill(Live);
                array.Fill(Live);
                s_enumerated = buffer;
                s_enumeratedArray = array;
                Thread.SpinWait(100);
                // An enumerator reads each element under a lease, so a free that meets one is refused
                // (InvalidOperationException) and retried, as the contract says an owner must.
                refused += Check.UntilNotRefused(buffer.Free);
                refused += Check.UntilNotRefused(array.Dispose);
                frees++;
                // Same thread, same size: jemalloc hands the freed blocks straight back.
                var victim = new FixedBuffer<int>(n);
                var victimArray = new SafeArray<int>(n);
                victim.Fill(Victim);
                victimArray.Fill(Victim);
                Thread.SpinWait(100);
                victim.Free();
                victimArray.Dispose();
            },
            i => Enumerate(s_enumerated, s_enumeratedArray, ref wrong, ref disposedSeen),
            i => Enumerate(s_enumerated, s_enumeratedArray, ref wrong, ref disposedSeen));
        Check.Info($"INFO frees={frees} enumerations={counts[1] + counts[2]} wrong-values={wrong} disposed-seen={disposedSeen} frees-refused-by-a-lease={refused}");
        Check.Equal(0L, wrong, "values an enumeration racing a free yielded from memory another structure had received (it must throw ObjectDisposedException instead)");
        // The race happened only if both sides ran and met: an enumeration found its structure freed.
        Check.True(frees > 0 && counts[1] > 0 && counts[2] > 0, "both sides of the race ran", $"frees={frees} enumerations={counts[1]}+{counts[2]}");
        Check.True(disposedSeen > 0, "the enumerations met freed structures", "no enumeration ever saw a freed structure: the race did not happen");
    }

    private static void PauseIf(bool pause)
    {
        if (pause)
        {
            Thread.Sleep(1);
        }
    }

    private static void Enumerate(FixedBuffer<int> buffer, SafeArray<int>? array, ref long wrong, ref long disposedSeen)
    {
        try
        {
            foreach (int value in buffer)
            {
                if (value != Live)
                {
                    Interlocked.Increment(ref wrong);
                }
            }
        }
        catch (ObjectDisposedException)
        {
            Interlocked.Increment(ref disposedSeen);
        }

        if (array is null)
        {
            return;
        }

        try
        {
            foreach (int value in array)
            {
                if (value != Live)
                {
                    Interlocked.Increment(ref wrong);
                }
            }
        }
        catch (ObjectDisposedException)
        {
            Interlocked.Increment(ref disposedSeen);
        }
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

    // ---- Racy copies of a FixedBuffer variable while another thread writes it

    private static FixedBuffer<long> s_sharedCopy;

    private static void FixedBufferCopies()
    {
        var small = new FixedBuffer<long>(3);
        var large = new FixedBuffer<long>(1000);
        small.Fill(3);
        large.Fill(1000);
        s_sharedCopy = small;
        long seenSmall = 0, seenLarge = 0;
        long[] counts = Check.RaceUntilMet("racy copies of two live buffers", TimeSpan.FromSeconds(1),
            () => Interlocked.Read(ref seenSmall) > 0 && Interlocked.Read(ref seenLarge) > 0, 5_000_000,
            i => s_sharedCopy = (i & 1) == 0 ? large : small,
            i => CheckCopy(s_sharedCopy, small, large, ref seenSmall, ref seenLarge),
            i => CheckCopy(s_sharedCopy, small, large, ref seenSmall, ref seenLarge));
        Check.Info($"INFO live copies: writes={counts[0]} reads={counts[1] + counts[2]} small={seenSmall} large={seenLarge}");
        // The race happened only if the readers copied the variable while it changed: both values seen.
        Check.True(counts[0] > 0 && counts[1] > 0 && counts[2] > 0, "both sides of the race ran");
        Check.True(seenSmall > 0 && seenLarge > 0, "the readers met both values of the variable", $"small={seenSmall} large={seenLarge}: the race did not happen");

        // The same with buffers that are freed and replaced all the time: a copy is one whole buffer,
        // live (its lease sees length == contents) or freed (throws).
        FixedBuffer<long> previous = default;
        long torn = 0, disposed = 0, good = 0;
        Check.RaceUntilMet("racy copies while buffers are freed", TimeSpan.FromSeconds(1),
            () => Interlocked.Read(ref good) > 0 && Interlocked.Read(ref disposed) > 0, 2_000_000,
            i =>
            {
                int length = 1 + (i % 512);
                var next = new FixedBuffer<long>(length);
                next.Fill(length);
                s_sharedCopy = next;
                if (previous != default)
                {
                    while (true)
                    {
                        try
                        {
                            previous.Free();
                            break;
                        }
                        catch (InvalidOperationException e) when (e is not ObjectDisposedException)
                        {
                            Thread.Yield(); // a reader's lease
                        }
                    }
                }

                previous = next;
            },
            i => LeaseCopy(s_sharedCopy, ref torn, ref disposed, ref good),
            i => LeaseCopy(s_sharedCopy, ref torn, ref disposed, ref good));
        Check.Info($"INFO copies: good={good} disposed={disposed} torn={torn}");
        Check.Equal(0L, torn, "torn copies");
        // The race happened only if readers leased live copies and also met copies of freed buffers.
        Check.True(good > 0 && disposed > 0, "the readers met live and freed buffers", $"good={good} disposed={disposed}: the race did not happen");
        small.Free();
        large.Free();
    }

    private static void CheckCopy(FixedBuffer<long> copy, FixedBuffer<long> small, FixedBuffer<long> large, ref long seenSmall, ref long seenLarge)
    {
        if (copy != small && copy != large)
        {
            Check.Fail("racy copy", "a copy equals neither buffer");
            return;
        }

        int length = copy.Length;
        long last = copy[length - 1];
        if (last != length || (copy == small) != (length == 3))
        {
            Check.Fail("racy copy", $"torn: length {length}, last element {last}");
        }

        if (copy == small)
        {
            Interlocked.Increment(ref seenSmall);
        }
        else
        {
            Interlocked.Increment(ref seenLarge);
        }
    }

    private static void LeaseCopy(FixedBuffer<long> copy, ref long torn, ref long disposed, ref long good)
    {
        // A reader that is slow between copying the variable and using the copy: the writer may free
        // the buffer meanwhile, which the lease must then refuse.
        Thread.SpinWait(20);
        try
        {
            using MemoryLease<long> lease = copy.Lease();
            long length = lease.Length;
            if (CountNot(lease.Span, length) != 0 || copy.Length != length)
            {
                Interlocked.Increment(ref torn);
                Check.Fail("racy copy", $"a leased copy of length {length} holds other contents: a mix of two buffers");
            }
            else
            {
                Interlocked.Increment(ref good);
            }
        }
        catch (ObjectDisposedException)
        {
            Interlocked.Increment(ref disposed);
        }
    }

    // ---- Finalizer vs lease: the last reference dropped while a lease is open

    private static void FinalizerVsLease()
    {
        const int n = 4096;
        for (int round = 0; round < 20; round++)
        {
            MemoryLease<int> lease = OpenLeaseOnUnreachableArray(n);
            Span<int> span = lease.Span;
            // The lease is not used after this line: the JIT may treat it (and the array it names) as
            // dead, so the finalizer may run now. It must not free memory a lease still covers.
            GC.Collect();
            GC.WaitForPendingFinalizers();
            GC.Collect();
            var victims = new List<SafeArray<int>>();
            for (int v = 0; v < 8; v++)
            {
                var victim = new SafeArray<int>(n);
                victim.Fill(Victim);
                victims.Add(victim);
            }

            span.Fill(Live + round);
            if (CountNot(span, Live + round) != 0)
            {
                Check.Fail("finalizer vs lease", "the leased span changed after the finalizer ran");
            }

            foreach (SafeArray<int> victim in victims)
            {
                if (!victim.SequenceEqual(Enumerable.Repeat(Victim, n).ToArray()))
                {
                    Check.Fail("finalizer vs lease", "an array allocated after the finalizer shares memory with a span of a still-open lease");
                }

                victim.Dispose();
            }
        }

        // The same through a library operation: a Fill running while the last reference is dropped.
        for (int round = 0; round < 50; round++)
        {
            FillUnreachable(1 << 16);
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }

        Check.Pass();
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static MemoryLease<int> OpenLeaseOnUnreachableArray(int n)
    {
        var array = new SafeArray<int>(n);
        array.Fill(Live);
        return array.Lease();
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void FillUnreachable(int n)
    {
        var collector = new Thread(() =>
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
        });
        collector.Start();
        new SafeArray<int>(n).VectorFill(Live);
        collector.Join();
    }

    // ---- helpers

    private static void Expect(string who, string operation, bool ok)
    {
        if (!ok)
        {
            Check.Fail(who, $"{operation} returned data that is not the structure's (read freed or reused memory) without throwing");
        }
    }

    internal static long CountNot<T>(ReadOnlySpan<T> span, T value)
        where T : IEquatable<T>
    {
        long bad = 0;
        foreach (T item in span)
        {
            if (!item.Equals(value))
            {
                bad++;
            }
        }

        return bad;
    }

    internal static long CountNot<T>(Span<T> span, T value)
        where T : IEquatable<T> => CountNot((ReadOnlySpan<T>)span, value);

    internal static long CountNot<T>(T[] array, T value)
        where T : IEquatable<T> => CountNot((ReadOnlySpan<T>)array, value);

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
