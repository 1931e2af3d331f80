using System.Runtime.CompilerServices;
using static jemalloc.Tests.ChildProcess.Adversarial.ScenarioHelpers;

namespace jemalloc.Tests.ChildProcess.Adversarial;

/// <summary>
/// Failure class: a free or Dispose racing the use of the array-like structures on other threads
/// (2+ threads, about 2 s each): Free/Dispose vs every bulk operation, Vector*, Parallel*, enumeration
/// and leases; the finalizer vs an open lease. An operation completes on the live memory or throws
/// ObjectDisposedException; no operation ever reads or writes memory that another structure has since
/// received (the "victims", allocated right after each free so that they reuse the block, must keep
/// their contents). Bounded by iterations and time.
/// </summary>
internal static class BufferDisposeRaceScenarios
{
    internal const string RaceFreeVsOpsFixedBuffer = "race-free-vs-ops-fixedbuffer";
    internal const string RaceDisposeVsOpsSafeArray = "race-dispose-vs-ops-safearray";
    internal const string RaceDisposeVsOpsHugeArray = "race-dispose-vs-ops-hugearray";
    internal const string RaceFreeVsEnumeration = "race-free-vs-enumeration";
    internal const string RaceFinalizerVsLease = "race-finalizer-vs-lease";

    internal static void Register(Dictionary<string, Action> all)
    {
        all[RaceFreeVsOpsFixedBuffer] = FreeVsOpsFixedBuffer;
        all[RaceDisposeVsOpsSafeArray] = () => DisposeVsOps(huge: false);
        all[RaceDisposeVsOpsHugeArray] = () => DisposeVsOps(huge: true);
        all[RaceFreeVsEnumeration] = FreeVsEnumeration;
        all[RaceFinalizerVsLease] = FinalizerVsLease;
    }

    private const int Live = 0x11111111;
    private const int Victim = 0x22222222;
    private static readonly TimeSpan Budget = TimeSpan.FromSeconds(2);
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
}
