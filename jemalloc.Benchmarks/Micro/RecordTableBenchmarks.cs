using System.Diagnostics.CodeAnalysis;
using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Configs;
using jemalloc.Benchmarks.Infrastructure;
using jemalloc.Benchmarks.Records;

namespace jemalloc.Benchmarks.Micro;

/// <summary>
/// The two queries of <c>jembench records</c> on their own, without the request loop around them:
/// lookups by id in batches of <see cref="RecordsHarness.LookupsPerRequest"/> (as one request makes
/// them) and the filtered scan of one window, on the best managed layout (the baseline: struct
/// records, a score column and a <see cref="Dictionary{TKey, TValue}"/>) and the native table.
/// Goal: the native rows at least 1.0x the struct rows' throughput.
/// </summary>
[MemoryDiagnoser]
[GroupBenchmarksBy(BenchmarkLogicalGroupRule.ByCategory)]
[SuppressMessage("Design", "CA1001:Types that own disposable fields should be disposable", Justification = "BenchmarkDotNet frees them in [GlobalCleanup].")]
public class RecordTableBenchmarks
{
    private const int Batches = 128;
    private const int Windows = 4;
    private IRecordTable _table = null!;
    private long[] _ids = null!;
    private RecordLookup[] _found = null!;
    private long[] _windowStarts = null!;

    /// <summary>Records in the table.</summary>
    [Params(2_000_000)]
    public int Records { get; set; }

    /// <summary>Builds the struct table.</summary>
    [GlobalSetup(Targets = [nameof(StructLookups), nameof(StructScans)])]
    public void SetupStruct() => Setup(new StructRecordTable(Records));

    /// <summary>Builds the native table.</summary>
    [GlobalSetup(Targets = [nameof(NativeLookups), nameof(NativeScans)])]
    public void SetupNative() => Setup(new NativeRecordTable(Records));

    /// <summary>Struct records + Dictionary&lt;long, int&gt;: 128 batches of 32 lookups by id.</summary>
    [Benchmark(Baseline = true, Description = "struct + Dictionary: 4,096 lookups by id (batches of 32)")]
    [BenchmarkCategory("lookups")]
    public double StructLookups() => Lookups();

    /// <summary>Native records + NativeHashIndex: 128 batches of 32 lookups by id.</summary>
    [Benchmark(Description = "native + NativeHashIndex: 4,096 lookups by id (batches of 32)")]
    [BenchmarkCategory("lookups")]
    public double NativeLookups() => Lookups();

    /// <summary>Struct records: four 65,536-row windows filtered by score range and name prefix.</summary>
    [Benchmark(Baseline = true, Description = "struct: scan 4 x 65,536 rows (score range + name prefix)")]
    [BenchmarkCategory("scans")]
    public long StructScans() => Scans();

    /// <summary>Native records: four 65,536-row windows filtered by score range and name prefix.</summary>
    [Benchmark(Description = "native: scan 4 x 65,536 rows (score range + name prefix)")]
    [BenchmarkCategory("scans")]
    public long NativeScans() => Scans();

    /// <summary>Checks both queries of the table that ran against the source data, then frees it.</summary>
    [GlobalCleanup]
    public void CheckAndFree()
    {
        try
        {
            string name = $"micro records [{_table.GetType().Name}, {Records}]";
            double expectedScores = 0;
            foreach (long id in _ids)
            {
                expectedScores += RecordData.ScoreOf(id) + RecordData.CategoryOf(id);
            }

            ResultChecks.Equal(name, expectedScores, BrokenResultSwitch.Corrupt(Lookups()), "sum of the scores and categories the lookups found");
            long expectedScan = 0;
            for (int w = 0; w < Windows; w++)
            {
                (double min, int prefix) = WindowFilter(w);
                for (long row = _windowStarts[w]; row < _windowStarts[w] + RecordsHarness.ScanWindow; row++)
                {
                    long id = RecordData.IdOf(row);
                    double score = RecordData.ScoreOf(id);
                    if (score >= min && score <= min + 10 && RecordData.NameOf(id, 0).StartsWith(RecordData.Prefixes[prefix], StringComparison.Ordinal))
                    {
                        expectedScan += 1 + id;
                    }
                }
            }

            ResultChecks.Equal(name, expectedScan, Scans(), "matches plus the sum of their ids over the scanned windows");
        }
        finally
        {
            _table.Dispose();
        }
    }

    private static (double Min, int Prefix) WindowFilter(int window) => (window * 20.0, window * 5 % RecordData.Prefixes.Length);

    private void Setup(IRecordTable table)
    {
        _table = table;
        _ids = new long[Batches * RecordsHarness.LookupsPerRequest];
        ulong state = 12345;
        for (int i = 0; i < _ids.Length; i++)
        {
            state = RecordData.Mix(state);
            _ids[i] = RecordData.IdOf((long)(state % (ulong)Records));
        }

        _found = new RecordLookup[RecordsHarness.LookupsPerRequest];
        _windowStarts = [.. Enumerable.Range(0, Windows).Select(w => (long)(RecordData.Mix((ulong)w + 7) % (ulong)(Records - RecordsHarness.ScanWindow)))];
    }

    private double Lookups()
    {
        double sum = 0;
        for (int b = 0; b < Batches; b++)
        {
            _table.Lookup(_ids.AsSpan(b * RecordsHarness.LookupsPerRequest, RecordsHarness.LookupsPerRequest), _found);
            foreach (RecordLookup hit in _found)
            {
                sum += hit.Score + hit.Category;
            }
        }

        return sum;
    }

    private long Scans()
    {
        long result = 0;
        for (int w = 0; w < Windows; w++)
        {
            (double min, int prefix) = WindowFilter(w);
            long idSum = 0;
            result += _table.Scan(_windowStarts[w], RecordsHarness.ScanWindow, min, min + 10, prefix, ref idSum);
            result += idSum;
        }

        return result;
    }
}
