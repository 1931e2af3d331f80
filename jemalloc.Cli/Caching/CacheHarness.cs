using System.Diagnostics;
using System.Globalization;
using System.Runtime.ExceptionServices;
using HdrHistogram;
using jemalloc.Benchmarks.Infrastructure;
using jemalloc.Cli.Columnar;

namespace jemalloc.Cli.Caching;

/// <summary>
/// One side of <c>jembench cache</c>: BitFaster's two shapes on small caches, then the server shape (fill, YCSB C,
/// B and A at each thread count, the scan, a forced full collection at steady state) and the expiry phase on a
/// fresh cache; every read checks its value, and each run measures throughput, sampled latency, collections and
/// pauses and the managed bytes allocated per operation.
/// </summary>
public static class CacheHarness
{
    /// <summary>One operation in this many is timed for the latency histogram.</summary>
    public const int SampleEvery = 8;

    /// <summary>How long the expiry phase's longest lifetime is, which the phase waits out before it counts what is left.</summary>
    public static readonly TimeSpan LongestLifetime = TimeSpan.FromSeconds(5);

    private static readonly TimeSpan RunTimeout = TimeSpan.FromHours(2);

    /// <summary>Runs <paramref name="side"/> through <paramref name="settings"/>, writing a line per run to <paramref name="progress"/>.</summary>
    /// <exception cref="BenchmarkVerificationException">A read found a value that was not written for its key.</exception>
    /// <exception cref="InvalidOperationException">A worker thread failed otherwise (the cache threw).</exception>
    public static CacheSideResult Run(CacheSide side, CacheSettings settings, TextWriter progress)
    {
        ArgumentNullException.ThrowIfNull(settings);
        ArgumentNullException.ThrowIfNull(progress);
        CacheData.CorruptNextCheck();
        var teams = new Dictionary<int, WorkerTeam>();
        try
        {
            var runs = new List<CacheRunResult>();
            RunSmallShapes(side, settings, teams, runs, progress);
            return settings.RunsServerShape
                ? RunServerShape(side, settings, teams, runs, progress)
                : new CacheSideResult(side, [.. runs], null, -1, -1, 0, 0, 0, 0, 0, CacheMemorySampler.PeakRssBytes(), 0, 0, 0, 0, 0);
        }
        finally
        {
            foreach (WorkerTeam team in teams.Values)
            {
                team.Dispose();
            }
        }
    }

    /// <summary>
    /// The keys and the caches' capacity of one of BitFaster's small shapes: zipf-read's cache holds all of its
    /// <see cref="CacheSettings.ZipfReadKeys"/> keys, read-write's a tenth of its <see cref="CacheSettings.ReadWriteKeys"/>.
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="workload"/> is not zipf-read or read-write.</exception>
    public static (CacheKeySpace Space, CacheCapacity Capacity) SmallShape(CacheWorkload workload)
    {
        if (workload is not (CacheWorkload.ZipfRead or CacheWorkload.ReadWrite))
        {
            throw new ArgumentOutOfRangeException(nameof(workload), workload, "Only zipf-read and read-write are small shapes.");
        }

        int keys = workload == CacheWorkload.ZipfRead ? CacheSettings.ZipfReadKeys : CacheSettings.ReadWriteKeys;
        var space = new CacheKeySpace(keys, keys, smallValues: true);
        return (space, CacheCapacity.For(space, workload == CacheWorkload.ZipfRead ? keys : keys / 10));
    }

    private static void RunSmallShapes(CacheSide side, CacheSettings settings, Dictionary<int, WorkerTeam> teams, List<CacheRunResult> runs, TextWriter progress)
    {
        foreach (CacheWorkload workload in settings.Workloads.Where(w => w is CacheWorkload.ZipfRead or CacheWorkload.ReadWrite))
        {
            (CacheKeySpace space, CacheCapacity capacity) = SmallShape(workload);
            int keys = space.Count;
            var zipf = new ZipfSampler(keys, CacheSettings.BitFasterExponent);
            using CacheSubject subject = CacheSides.Create(side, space, capacity, expiring: false, prepareKeys: true);
            // A first pass, untimed, as BitFaster's benchmark warms up: the cache fills and the code is compiled.
            _ = Timed(subject, workload, Team(teams, 1), [CacheStreams.Make(zipf, settings.Operations, 0, CacheStreams.Seed(workload, 0, 0))], expiring: false, seconds: null);
            foreach (int threads in settings.Threads)
            {
                runs.Add(Report(progress, subject, Timed(subject, workload, Team(teams, threads), Streams(zipf, workload, threads, settings.Operations, 0), expiring: false, seconds: null)));
            }
        }
    }

    private static CacheSideResult RunServerShape(CacheSide side, CacheSettings settings, Dictionary<int, WorkerTeam> teams, List<CacheRunResult> runs, TextWriter progress)
    {
        int entries = settings.Entries;
        int held = settings.ServerCapacityEntries;
        bool scan = settings.Workloads.Contains(CacheWorkload.Scan);
        // The scan's keys follow the workloads' keys: as many as the cache holds, none of them read before.
        var space = new CacheKeySpace(entries + (scan ? held : 0), entries, smallValues: false);
        CacheCapacity capacity = CacheCapacity.For(space, held);
        var zipf = new ZipfSampler(entries, CacheSettings.ServerExponent);
        using var sampler = new CacheMemorySampler();
        Release(teams);
        GC.Collect();
        long baseline = GC.GetTotalMemory(forceFullCollection: true);
        double fillSeconds = -1, forcedMs = -1;
        long entriesHeld = 0, entryBytes = 0, managedBytes = 0, nativeBytes = 0, deadBytes = 0;
        if (settings.Workloads.Any(w => w is >= CacheWorkload.YcsbA and <= CacheWorkload.Scan))
        {
            using CacheSubject subject = CacheSides.Create(side, space, capacity, expiring: false, prepareKeys: false);
            // Whatever happens, the sampler lets go of the cache before it is freed.
            using var watch = sampler.Watching(subject);
            fillSeconds = Fill(subject, Team(teams, settings.OnceThreads), entries, expiring: false);
            progress.WriteLine(string.Create(CultureInfo.InvariantCulture, $"cache: {subject.Name}: filled {entries:N0} keys in {fillSeconds:F1} s."));
            foreach ((CacheWorkload workload, double writes) in new[] { (CacheWorkload.YcsbC, 0.0), (CacheWorkload.YcsbB, 0.05), (CacheWorkload.YcsbA, 0.5) })
            {
                if (settings.Workloads.Contains(workload))
                {
                    foreach (int threads in settings.Threads)
                    {
                        runs.Add(Report(progress, subject, Timed(subject, workload, Team(teams, threads), Streams(zipf, workload, threads, settings.Operations, writes), expiring: false, seconds: null)));
                    }
                }
            }

            if (scan)
            {
                runs.Add(Report(progress, subject, Scan(subject, zipf, entries, held, settings.Operations, teams)));
            }

            // Steady state: the cache full and in use. One forced full blocking collection, timed.
            Release(teams);
            sampler.Sample();
            long start = Stopwatch.GetTimestamp();
            GC.Collect();
            forcedMs = Stopwatch.GetElapsedTime(start).TotalMilliseconds;
            managedBytes = Math.Max(0, GC.GetTotalMemory(forceFullCollection: false) - baseline);
            NativeCacheStatistics? statistics = subject.NativeStatistics();
            nativeBytes = statistics?.AllocatedBytes ?? 0;
            deadBytes = statistics?.DeadBytes ?? 0;
            (entriesHeld, entryBytes) = subject.Contents();
        }

        GC.Collect();
        if (settings.Workloads.Contains(CacheWorkload.Expiry))
        {
            runs.Add(Report(progress, null, Expiry(side, space, capacity, zipf, settings, teams, sampler)));
        }

        sampler.Sample();
        return new CacheSideResult(side, [.. runs], capacity, fillSeconds, forcedMs, entriesHeld, entryBytes, managedBytes, nativeBytes, deadBytes,
            CacheMemorySampler.PeakRssBytes(), sampler.PeakManagedBytes, sampler.PeakNativeBytes, sampler.PeakArenaBytes, sampler.Samples, sampler.SamplesOverBudget);
    }

    // The hot set's hit ratio (reads of the Zipf stream that write nothing) before and after one pass, on one
    // thread, over as many new keys as the cache holds (each a miss, then written, as a cache-aside reader does).
    private static CacheRunResult Scan(CacheSubject subject, ZipfSampler zipf, int entries, int held, int operations, Dictionary<int, WorkerTeam> teams)
    {
        WorkerTeam one = Team(teams, 1);
        // Frequencies established first, as in use, whichever workloads ran before.
        _ = Timed(subject, CacheWorkload.Scan, one, [CacheStreams.Make(zipf, operations, 0, CacheStreams.Seed(CacheWorkload.Scan, 0, 0))], expiring: false, seconds: null);
        int[] probe = CacheStreams.Make(zipf, operations, 0, CacheStreams.Seed(CacheWorkload.Scan, 0, 1));
        double before = Probe(subject, probe);
        int[] pass = [.. Enumerable.Range(entries, held)];
        CacheRunResult run = Timed(subject, CacheWorkload.Scan, one, [pass], expiring: false, seconds: null);
        return run with { HotHitRatioBefore = before, HotHitRatioAfter = Probe(subject, probe) };
    }

    private static double Probe(CacheSubject subject, int[] keys)
    {
        long hits = 0;
        foreach (int key in keys)
        {
            hits += subject.Read(key) ? 1 : 0;
        }

        return keys.Length == 0 ? 0 : (double)hits / keys.Length;
    }

    // A fresh cache whose entries have lifetimes (30% of the keys, 1 to 5 s): filled, then YCSB B's mix for the
    // phase's seconds; then the longest lifetime is waited out and the expired entries trimmed.
    private static CacheRunResult Expiry(CacheSide side, CacheKeySpace space, CacheCapacity capacity, ZipfSampler zipf, CacheSettings settings,
        Dictionary<int, WorkerTeam> teams, CacheMemorySampler sampler)
    {
        using CacheSubject subject = CacheSides.Create(side, space, capacity, expiring: true, prepareKeys: false);
        using var watch = sampler.Watching(subject);
        int threads = settings.OnceThreads;
        _ = Fill(subject, Team(teams, threads), settings.Entries, expiring: true);
        CacheRunResult run = Timed(subject, CacheWorkload.Expiry, Team(teams, threads),
            Streams(zipf, CacheWorkload.Expiry, threads, settings.Operations, 0.05), expiring: true, seconds: settings.ExpirySeconds);
        long before = subject.Contents().Entries;
        Thread.Sleep(LongestLifetime + TimeSpan.FromMilliseconds(100));
        subject.TrimExpired();
        long after = subject.Contents().Entries;
        sampler.Sample();
        return run with { EntriesBeforeExpiry = before, EntriesAfterExpiry = after };
    }

    private static double Fill(CacheSubject subject, WorkerTeam team, int entries, bool expiring)
    {
        long start = Stopwatch.GetTimestamp();
        RunTeam(team, t =>
        {
            for (int key = t; key < entries; key += team.Count)
            {
                subject.Write(key, expiring);
            }
        });
        return Stopwatch.GetElapsedTime(start).TotalSeconds;
    }

    private static int[][] Streams(ZipfSampler zipf, CacheWorkload workload, int threads, int operations, double writes) =>
        [.. Enumerable.Range(0, threads).Select(t => CacheStreams.Make(zipf, (operations / threads) + (t < operations % threads ? 1 : 0), writes, CacheStreams.Seed(workload, threads, t)))];

    // Each thread runs its stream (over and over until the deadline, if the run has seconds): a write writes the
    // key's next version; a read checks what it finds and, on a miss, writes the key as a cache-aside reader does.
    private static CacheRunResult Timed(CacheSubject subject, CacheWorkload workload, WorkerTeam team, int[][] streams, bool expiring, double? seconds)
    {
        int threads = team.Count;
        long highest = Stopwatch.Frequency * 3600;
        var histograms = new LongHistogram[threads];
        var reads = new long[threads];
        var hits = new long[threads];
        var done = new long[threads];
        for (int t = 0; t < threads; t++)
        {
            histograms[t] = new LongHistogram(highest, 3);
        }

        using PhaseMeter meter = PhaseMeter.Start(trackGcPauses: true);
        long allocated = GC.GetTotalAllocatedBytes(precise: true);
        long start = Stopwatch.GetTimestamp();
        long deadline = seconds is double s ? start + (long)(s * Stopwatch.Frequency) : long.MaxValue;
        RunTeam(team, t =>
        {
            int[] stream = streams[t];
            LongHistogram histogram = histograms[t];
            long r = 0, h = 0, n = 0;
            int i = 0;
            while (stream.Length > 0)
            {
                if (i == stream.Length)
                {
                    if (deadline == long.MaxValue)
                    {
                        break;
                    }

                    i = 0;
                }

                if ((n & 1023) == 0 && deadline != long.MaxValue && Stopwatch.GetTimestamp() >= deadline)
                {
                    break;
                }

                int op = stream[i++];
                int key = op & int.MaxValue;
                bool timed = n % SampleEvery == 0;
                long opStart = timed ? Stopwatch.GetTimestamp() : 0;
                if (op < 0)
                {
                    subject.Write(key, expiring);
                }
                else
                {
                    r++;
                    if (subject.Read(key))
                    {
                        h++;
                    }
                    else
                    {
                        subject.Write(key, expiring);
                    }
                }

                if (timed)
                {
                    histogram.RecordValue(Math.Min(highest, Stopwatch.GetTimestamp() - opStart));
                }

                n++;
            }

            (reads[t], hits[t], done[t]) = (r, h, n);
        });
        double elapsed = Stopwatch.GetElapsedTime(start).TotalSeconds;
        PhaseTotals totals = meter.Stop();
        long operations = done.Sum();
        allocated = GC.GetTotalAllocatedBytes(precise: true) - allocated;
        LongHistogram all = histograms[0];
        for (int t = 1; t < threads; t++)
        {
            all.Add(histograms[t]);
        }

        double toUs = 1e6 / Stopwatch.Frequency;
        bool any = all.TotalCount > 0;
        return new CacheRunResult(workload, threads, operations, elapsed, reads.Sum(), hits.Sum(),
            any ? all.GetValueAtPercentile(50) * toUs : 0, any ? all.GetValueAtPercentile(99) * toUs : 0,
            any ? all.GetValueAtPercentile(99.9) * toUs : 0, any ? all.GetMaxValue() * toUs : 0,
            totals.Gen0, totals.Gen1, totals.Gen2, totals.TotalGcPauseMs, totals.LongestGcPauseMs,
            operations > 0 ? (double)allocated / operations : 0, -1, -1, -1, -1);
    }

    private static void RunTeam(WorkerTeam team, Action<int> work)
    {
        try
        {
            team.Run(work, RunTimeout);
        }
        catch (AggregateException e)
        {
            // A wrong value is the run's verdict (exit code 2); anything else the cache threw is a failure of the run.
            Exception first = e.InnerExceptions.OfType<BenchmarkVerificationException>().FirstOrDefault() ?? e.InnerExceptions[0];
            if (first is BenchmarkVerificationException)
            {
                ExceptionDispatchInfo.Throw(first);
            }

            throw new InvalidOperationException($"cache: a worker thread failed: {first.GetType().Name}: {first.Message}", e);
        }
    }

    // A team keeps its last work, and the work its cache and streams: runs nothing on each, so that the heap
    // measured holds only the cache.
    private static void Release(Dictionary<int, WorkerTeam> teams)
    {
        foreach (WorkerTeam team in teams.Values)
        {
            team.Run(static _ => { }, RunTimeout);
        }
    }

    private static WorkerTeam Team(Dictionary<int, WorkerTeam> teams, int threads)
    {
        if (!teams.TryGetValue(threads, out WorkerTeam? team))
        {
            team = new WorkerTeam(threads, "jembench cache");
            teams[threads] = team;
        }

        return team;
    }

    private static CacheRunResult Report(TextWriter progress, CacheSubject? subject, CacheRunResult run)
    {
        progress.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"cache: {subject?.Name ?? "expiry"}: {CacheWorkloads.Name(run.Workload)} x{run.Threads}: {run.OperationsPerSecond / 1e6:F2} M ops/s, hit {run.HitRatio:P1}, p99 {run.P99Us:F1} us, longest GC pause {run.LongestPauseMs:F1} ms."));
        return run;
    }
}
