using static jemalloc.Tests.ChildProcess.Adversarial.ScenarioHelpers;

namespace jemalloc.Tests.ChildProcess.Adversarial;

/// <summary>
/// Failure class: checked mode's detection (run with <c>JEMALLOC_NET_CHECKED=1</c>) for the array-like
/// structures: the races the contract leaves to the user (an element access without a lease racing a
/// free; a span used after its lease's Dispose) read poison (0xDB) or throw, never another live
/// structure's data, and a write after the free is reported.
/// </summary>
internal static class BufferCheckedModeScenarios
{
    internal const string CheckedStaleSpan = "checked-stale-span";
    internal const string CheckedRacingIndexer = "checked-racing-indexer";

    internal static void Register(Dictionary<string, Action> all)
    {
        all[CheckedStaleSpan] = StaleSpan;
        all[CheckedRacingIndexer] = RacingIndexer;
    }

    private const int Live = 0x11111111;
    private const int Victim = 0x22222222;
    private const int Poison = unchecked((int)0xDBDBDBDB);

    private static void StaleSpan()
    {
        Check.True(AllocationLedger.CheckedMode, "JEMALLOC_NET_CHECKED=1 turns checked mode on");
        var reports = new List<UseAfterFreeEventArgs>();
        AllocationLedger.UseAfterFreeDetected += (_, e) => { lock (reports) { reports.Add(e); } };
        long before = AllocationLedger.UseAfterFreeWritesDetected;

        foreach (bool array in new[] { false, true })
        {
            string what = array ? "SafeArray" : "FixedBuffer";
            const int n = 256;
            FixedBuffer<byte> buffer = default;
            SafeArray<byte>? safe = null;
            MemoryLease<byte> lease;
            if (array)
            {
                safe = new SafeArray<byte>(n);
                safe.Fill(0x5A);
                lease = safe.Lease();
            }
            else
            {
                buffer = new FixedBuffer<byte>(n);
                buffer.Fill(0x5A);
                lease = buffer.Lease();
            }

            // Safe C#, no unsafe code: a span kept past its lease's Dispose, then the structure freed.
            Span<byte> stale = lease.Span;
            lease.Dispose();
            if (array)
            {
                safe!.Dispose();
            }
            else
            {
                buffer.Free();
            }

            var victims = new List<FixedBuffer<byte>>();
            var victimArrays = new List<SafeArray<byte>>();
            for (int v = 0; v < 16; v++)
            {
                var victim = new FixedBuffer<byte>(n);
                victim.Fill(0x77);
                victims.Add(victim);
                var victimArray = new SafeArray<byte>(n);
                victimArray.Fill(0x77);
                victimArrays.Add(victimArray);
            }

            Check.Equal(0L, CountNot(stale, (byte)0xDB), $"{what}: a stale span reads poison, not the old data or a new structure's");
            stale[10] = 1;
            AllocationLedger.FlushQuarantine();
            foreach (FixedBuffer<byte> victim in victims)
            {
                Check.True(victim.SequenceEqual(Enumerable.Repeat((byte)0x77, n).ToArray()), $"{what}: victim FixedBuffer untouched by the stale write");
                victim.Free();
            }

            foreach (SafeArray<byte> victim in victimArrays)
            {
                Check.True(victim.SequenceEqual(Enumerable.Repeat((byte)0x77, n).ToArray()), $"{what}: victim SafeArray untouched by the stale write");
                victim.Dispose();
            }
        }

        Check.Equal(before + 2, AllocationLedger.UseAfterFreeWritesDetected, "both stale writes counted");
        lock (reports)
        {
            Check.Equal(2, reports.Count, "both stale writes raised UseAfterFreeDetected");
            foreach (UseAfterFreeEventArgs report in reports)
            {
                Check.Info($"REPORT {report}");
                Check.Equal(10L, report.Offset, "reported offset of the stale write");
                Check.Equal((nuint)256, report.Size, "reported size");
            }
        }
    }

    private static FixedBuffer<int> s_buffer;
    private static volatile SafeArray<int>? s_array;

    private static void RacingIndexer()
    {
        Check.True(AllocationLedger.CheckedMode, "JEMALLOC_NET_CHECKED=1 turns checked mode on");
        const int n = 64;
        long before = AllocationLedger.UseAfterFreeWritesDetected;
        long poisonReads = 0, disposedSeen = 0, frees = 0;
        Check.Race("racing indexer vs free (checked)", TimeSpan.FromSeconds(2), 200_000,
            i =>
            {
                var buffer = new FixedBuffer<int>(n);
                var array = new SafeArray<int>(n);
                buffer.Fill(Live);
                array.Fill(Live);
                s_buffer = buffer;
                s_array = array;
                Thread.SpinWait(30);
                buffer.Free();
                array.Dispose();
                frees++;
                // Victims at once on the same thread: without the quarantine they would get the block.
                var victim = new FixedBuffer<int>(n);
                var victimArray = new SafeArray<int>(n);
                victim.Fill(Victim);
                victimArray.Fill(Victim);
                Thread.SpinWait(30);
                if (CountNot(victim.ToArray(), Victim) != 0 || CountNot(victimArray.ToArray(), Victim) != 0)
                {
                    Check.Fail("checked mode", $"iteration {i}: a racing write through a freed structure landed in a live one");
                }

                victim.Free();
                victimArray.Dispose();
            },
            i =>
            {
                // Reader without a lease: the documented data race.
                FixedBuffer<int> b = s_buffer;
                SafeArray<int>? a = s_array;
                for (int j = 0; j < n; j++)
                {
                    ReadOne(() => b[j], ref poisonReads, ref disposedSeen);
                    if (a is not null)
                    {
                        ReadOne(() => a[j], ref poisonReads, ref disposedSeen);
                    }
                }
            },
            i =>
            {
                // Writer without a lease.
                FixedBuffer<int> b = s_buffer;
                SafeArray<int>? a = s_array;
                try
                {
                    for (int j = 0; j < n; j++)
                    {
                        b[j] = Live;
                        if (a is not null)
                        {
                            a[j] = Live;
                        }
                    }
                }
                catch (ObjectDisposedException)
                {
                    Interlocked.Increment(ref disposedSeen);
                }
                catch (IndexOutOfRangeException)
                {
                    // default(FixedBuffer) before the first publication
                }
            });
        AllocationLedger.FlushQuarantine();
        Check.Info($"INFO frees={frees} poison-reads={poisonReads} disposed-seen={disposedSeen} writes-detected={AllocationLedger.UseAfterFreeWritesDetected - before}");
        Check.True(frees > 100, "enough iterations ran", $"only {frees}");
    }

    private static void ReadOne(Func<int> read, ref long poisonReads, ref long disposedSeen)
    {
        try
        {
            int value = read();
            if (value == Poison)
            {
                Interlocked.Increment(ref poisonReads);
            }
            else if (value != Live)
            {
                Check.Fail("checked mode", $"a racing read after free returned 0x{value:X8}: {(value == Victim ? "another live structure's data" : "neither the structure's value nor poison")}");
            }
        }
        catch (ObjectDisposedException)
        {
            Interlocked.Increment(ref disposedSeen);
        }
        catch (IndexOutOfRangeException)
        {
            // default(FixedBuffer) before the first publication
        }
    }
}
