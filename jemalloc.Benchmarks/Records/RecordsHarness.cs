using System.Diagnostics;
using System.Text;
using jemalloc.Benchmarks.Infrastructure;

namespace jemalloc.Benchmarks.Records;

/// <summary>
/// The timed harness of <c>jembench records</c>: builds one side's table, then runs the request
/// loop (lookups by id, a filtered scan, a few renames and short-lived garbage per request) with
/// full blocking collections induced at fixed requests, and measures GC pauses, latency and memory.
/// </summary>
public static class RecordsHarness
{
    /// <summary>Lookups by id per request.</summary>
    public const int LookupsPerRequest = 32;

    /// <summary>Rows of the window each request scans.</summary>
    public const int ScanWindow = 65_536;

    /// <summary>Renames per request.</summary>
    public const int RenamesPerRequest = 4;

    /// <summary>Builds the side's table and runs the loop.</summary>
    /// <param name="side">The layout.</param>
    /// <param name="records">Records in the table (at most <see cref="int.MaxValue"/> on the managed sides).</param>
    /// <param name="requests">Requests in the loop.</param>
    /// <param name="fullCollections">Full blocking collections induced at evenly spaced requests.</param>
    /// <param name="corrupt">Test hook: this side reports one scan match too many, which the cross-side check must catch.</param>
    /// <exception cref="BenchmarkVerificationException">A lookup did not find its record, or found wrong values.</exception>
    public static RecordsResult Run(RecordsSide side, long records, int requests, int fullCollections, bool corrupt)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(records, ScanWindow);
        ArgumentOutOfRangeException.ThrowIfLessThan(requests, 1);
        ArgumentOutOfRangeException.ThrowIfNegative(fullCollections);
        var build = Stopwatch.StartNew();
        using IRecordTable table = side switch
        {
            RecordsSide.Class => new ClassRecordTable(checked((int)records)),
            RecordsSide.Struct => new StructRecordTable(checked((int)records)),
            _ => new NativeRecordTable(records),
        };
        double buildSeconds = build.Elapsed.TotalSeconds;
        long peakHeap = GC.GetTotalMemory(forceFullCollection: true);
        GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: true);
        GC.WaitForPendingFinalizers();
        peakHeap = Math.Max(peakHeap, GC.GetGCMemoryInfo(GCKind.Any).HeapSizeBytes);

        var latencies = new long[requests];
        var ids = new long[LookupsPerRequest];
        var found = new RecordLookup[LookupsPerRequest];
        long lookupTicks = 0;
        long scanTicks = 0;
        ulong checksum = 14_695_981_039_346_656_037UL;
        var pauses = new PauseTracker();
        TimeSpan pauseBefore = GC.GetTotalPauseDuration();
        int gen0 = GC.CollectionCount(0);
        int gen1 = GC.CollectionCount(1);
        int gen2 = GC.CollectionCount(2);
        int nextInduced = 1;
        for (int request = 0; request < requests; request++)
        {
            long start = Stopwatch.GetTimestamp();
            if (fullCollections > 0 && nextInduced <= fullCollections && request == (int)((long)requests * nextInduced / (fullCollections + 1)))
            {
                // A full blocking collection lands in this request, as one would in production.
                GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: false);
                nextInduced++;
            }

            ulong state = RecordData.Mix((ulong)request + 1);
            var response = new StringBuilder();
            for (int i = 0; i < LookupsPerRequest; i++)
            {
                state = RecordData.Mix(state);
                ids[i] = RecordData.IdOf((long)(state % (ulong)records));
            }

            long lookupStart = Stopwatch.GetTimestamp();
            table.Lookup(ids, found);
            long lookupEnd = Stopwatch.GetTimestamp();
            lookupTicks += lookupEnd - lookupStart;
            CheckLookups(side, ids, found);
            for (int i = 0; i < LookupsPerRequest; i++)
            {
                RecordLookup hit = found[i];
                checksum = Add(checksum, (ulong)hit.Category ^ (ulong)BitConverter.DoubleToInt64Bits(hit.Score) ^ (ulong)hit.Updated.Ticks);
                _ = response.Append(ids[i]).Append(':').Append(hit.Category).Append(';');
            }

            long firstId = RecordData.IdOf((long)(RecordData.Mix(state) % (ulong)records));
            string name = table.NameOf(firstId);
            checksum = Add(checksum, RecordData.HashOf(name));
            _ = response.Append(name);

            state = RecordData.Mix(state);
            long scanStart = (long)(state % (ulong)(records - ScanWindow + 1));
            double min = (state >> 20) % 90;
            int prefix = (int)((state >> 40) % (ulong)RecordData.Prefixes.Length);
            long idSum = 0;
            long scanBegin = Stopwatch.GetTimestamp();
            int matches = table.Scan(scanStart, ScanWindow, min, min + 10, prefix, ref idSum);
            scanTicks += Stopwatch.GetTimestamp() - scanBegin;
            if (corrupt && request == 0)
            {
                matches++;
            }

            checksum = Add(Add(checksum, (ulong)matches), (ulong)idSum);

            for (int i = 0; i < RenamesPerRequest; i++)
            {
                state = RecordData.Mix(state);
                long row = (long)(state % (ulong)records);
                table.Rename(row, RecordData.NameOf(RecordData.IdOf(row), request + 1));
            }

            // The response: short-lived garbage of the size a real handler makes.
            string text = response.Append(matches).Append(idSum).ToString();
            byte[] body = Encoding.UTF8.GetBytes(text);
            checksum = Add(checksum, (ulong)body.Length);

            latencies[request] = Stopwatch.GetTimestamp() - start;
            pauses.Sample();
        }

        double totalPauseMs = (GC.GetTotalPauseDuration() - pauseBefore).TotalMilliseconds;
        gen0 = GC.CollectionCount(0) - gen0;
        gen1 = GC.CollectionCount(1) - gen1;
        gen2 = GC.CollectionCount(2) - gen2;
        peakHeap = Math.Max(peakHeap, pauses.PeakHeapBytes);
        Array.Sort(latencies);
        double toUs = 1_000_000.0 / Stopwatch.Frequency;
        long nativeBytes = AllocationLedger.LiveBytes;
        return new RecordsResult(
            side,
            records,
            requests,
            buildSeconds,
            totalPauseMs,
            pauses.MaxPauseMs,
            gen0,
            gen1,
            gen2,
            latencies[(int)((requests - 1) * 0.50)] * toUs,
            latencies[(int)((requests - 1) * 0.99)] * toUs,
            latencies[(int)((requests - 1) * 0.999)] * toUs,
            latencies[^1] * toUs,
            ProcessMemory.PeakResidentBytes(Environment.ProcessId) ?? -1,
            peakHeap,
            nativeBytes,
            (double)requests * LookupsPerRequest / (lookupTicks / (double)Stopwatch.Frequency),
            (double)requests * ScanWindow / (scanTicks / (double)Stopwatch.Frequency),
            checksum);
    }

    /// <summary>Checks what a batch of lookups found against the source data: every id present, with its record's values.</summary>
    /// <exception cref="BenchmarkVerificationException">A record is missing or has wrong values.</exception>
    public static void CheckLookups(RecordsSide side, ReadOnlySpan<long> ids, ReadOnlySpan<RecordLookup> found)
    {
        for (int i = 0; i < ids.Length; i++)
        {
            long id = ids[i];
            RecordLookup hit = found[i];
            if (!hit.Found)
            {
                throw new BenchmarkVerificationException($"records ({side}): the lookup of id {id} found nothing.");
            }

            if (hit.Category != RecordData.CategoryOf(id) || hit.Score != RecordData.ScoreOf(id) || hit.Updated != RecordData.UpdatedOf(id))
            {
                throw new BenchmarkVerificationException($"records ({side}): the lookup of id {id} returned a wrong record.");
            }
        }
    }

    private static ulong Add(ulong hash, ulong value) => (hash ^ value) * 1_099_511_628_211UL;

    // Reads the pause of each collection that ended since the last sample: the runtime keeps the
    // last collection of each kind, so sampling after every request sees all but a collection
    // followed by another of the same kind within one request (whose pauses still count in the total).
    private sealed class PauseTracker
    {
        private static readonly GCKind[] Kinds = [GCKind.Ephemeral, GCKind.FullBlocking, GCKind.Background];
        private readonly long[] _lastIndex = [.. Kinds.Select(k => GC.GetGCMemoryInfo(k).Index)];
        private int _collections = GC.CollectionCount(0);

        public double MaxPauseMs { get; private set; }

        public long PeakHeapBytes { get; private set; }

        public void Sample()
        {
            int collections = GC.CollectionCount(0);
            if (collections == _collections)
            {
                return;
            }

            _collections = collections;
            for (int i = 0; i < Kinds.Length; i++)
            {
                ReadKind(Kinds[i], i);
            }
        }

        private void ReadKind(GCKind kind, int slot)
        {
            GCMemoryInfo info = GC.GetGCMemoryInfo(kind);
            if (info.Index == 0 || info.Index == _lastIndex[slot])
            {
                return;
            }

            _lastIndex[slot] = info.Index;
            foreach (TimeSpan pause in info.PauseDurations)
            {
                MaxPauseMs = Math.Max(MaxPauseMs, pause.TotalMilliseconds);
            }

            PeakHeapBytes = Math.Max(PeakHeapBytes, info.HeapSizeBytes);
        }
    }
}
