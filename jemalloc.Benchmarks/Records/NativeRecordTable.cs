namespace jemalloc.Benchmarks.Records;

/// <summary>
/// The <c>native</c> side: <see cref="NativeRecord"/>s in a <see cref="HugeArray{T}"/>, names in a
/// <see cref="Utf8StringStore"/>, scores in a <see cref="HugeArray{T}"/> column scanned with
/// <see cref="ColumnScan"/>, and a <see cref="NativeHashIndex{TKey}"/> from id to row. The managed
/// heap holds a handful of objects whatever the number of records.
/// </summary>
public sealed class NativeRecordTable : IRecordTable
{
    private readonly HugeArray<NativeRecord> _rows;
    private readonly HugeArray<double> _scores;
    private readonly NativeHashIndex<long> _rowOf;
    private readonly Utf8StringStore _names;
    private int[] _matches = [];
    private long[] _found = [];
    private long[] _hitRows = [];
    private NativeRecord[] _hitRecords = [];
    private double[] _hitScores = [];

    /// <summary>Builds the table of <paramref name="count"/> records.</summary>
    public NativeRecordTable(long count)
    {
        // Huge pages: a lookup touches three random places of hundreds of MiB (index, row, score); with
        // 4 KiB pages each also misses the TLB, and the page walk misses the cache.
        AllocationOptions options = AllocationOptions.WithHugePages;
        _rows = new HugeArray<NativeRecord>(count, options);
        _scores = new HugeArray<double>(count, options);
        _rowOf = new NativeHashIndex<long>(count, options);
        _names = new Utf8StringStore(16 << 20, options);
        for (long row = 0; row < count; row++)
        {
            long id = RecordData.IdOf(row);
            _rows[row] = new NativeRecord { Id = id, Name = _names.Add(RecordData.NameOf(id, 0)), Category = RecordData.CategoryOf(id), Updated = RecordData.UpdatedOf(id) };
            _scores[row] = RecordData.ScoreOf(id);
            _rowOf.Add(id, row);
        }
    }

    /// <inheritdoc/>
    public long Count => _rows.Length;

    /// <summary>The native bytes of the string store's blocks.</summary>
    public long NameBytes => _names.ReservedBytes;

    /// <inheritdoc/>
    public void Lookup(ReadOnlySpan<long> ids, Span<RecordLookup> results)
    {
        if (_found.Length < ids.Length)
        {
            _found = new long[ids.Length];
            _hitRows = new long[ids.Length];
            _hitRecords = new NativeRecord[ids.Length];
            _hitScores = new double[ids.Length];
        }

        // One lease of the index for the whole batch, its slots fetched from memory together; then the
        // rows and scores of the ids found, gathered the same way.
        _ = _rowOf.TryGetValues(ids, _found);
        int hits = 0;
        for (int i = 0; i < ids.Length; i++)
        {
            if (_found[i] >= 0)
            {
                _hitRows[hits++] = _found[i];
            }
        }

        _rows.Gather(_hitRows.AsSpan(0, hits), _hitRecords);
        _scores.Gather(_hitRows.AsSpan(0, hits), _hitScores);
        int hit = 0;
        for (int i = 0; i < ids.Length; i++)
        {
            if (_found[i] >= 0)
            {
                ref NativeRecord record = ref _hitRecords[hit];
                results[i] = new RecordLookup(true, record.Category, _hitScores[hit], record.Updated);
                hit++;
            }
            else
            {
                results[i] = default;
            }
        }
    }

    /// <inheritdoc/>
    public string NameOf(long id) => _rows[_rowOf[id]].Name.ToString();

    /// <inheritdoc/>
    public int Scan(long start, int count, double min, double max, int prefix, ref long idSum)
    {
        if (_matches.Length < count)
        {
            _matches = new int[count];
        }

        ReadOnlySpan<byte> wanted = RecordData.Utf8Prefixes[prefix];
        int found = ColumnScan.FindInRange(_scores, start, count, min, max, _matches);
        int matches = 0;
        // One lease of the rows and one read scope of the names for the whole window: the candidates
        // are then read through a span, not one checked indexer call each.
        using MemoryLease<NativeRecord> lease = _rows.Lease();
        using StringStoreReadScope scope = _names.EnterRead();
        ReadOnlySpan<NativeRecord> window = lease.AsSpan(start, count);
        for (int m = 0; m < found; m++)
        {
            ref readonly NativeRecord record = ref window[_matches[m]];
            if (record.Name.StartsWith(wanted))
            {
                matches++;
                idSum += record.Id;
            }
        }

        return matches;
    }

    /// <inheritdoc/>
    public void Rename(long row, string name)
    {
        NativeRecord record = _rows[row];
        record.Name = _names.Replace(record.Name, name);
        _rows[row] = record;
    }

    /// <inheritdoc/>
    public void Dispose()
    {
        _rowOf.Dispose();
        _names.Dispose();
        _scores.Dispose();
        _rows.Dispose();
    }
}
