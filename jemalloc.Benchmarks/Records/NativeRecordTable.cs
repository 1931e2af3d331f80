namespace jemalloc.Benchmarks.Records;

/// <summary>
/// The <c>native</c> side: <see cref="NativeRecord"/>s in a <see cref="HugeArray{T}"/>, names in a
/// <see cref="Utf8StringStore"/> with their <see cref="StoredUtf8String"/> values in a column of
/// their own, scores in a <see cref="HugeArray{T}"/> column, both scanned with <see cref="ColumnScan"/>,
/// and a <see cref="NativeHashIndex{TKey}"/> from id to row. The managed heap holds a handful of
/// objects whatever the number of records.
/// </summary>
public sealed class NativeRecordTable : IRecordTable
{
    private readonly HugeArray<NativeRecord> _rows;
    private readonly HugeArray<double> _scores;
    private readonly HugeArray<StoredUtf8String> _nameColumn;
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
        // Every block as the library gives it without options (huge pages only where this host's
        // first-touch measurement favours them, HugePagePolicy.Selection): this side shows the library as a
        // user gets it. Huge pages spare a lookup's three random reads TLB misses; where their first touch
        // is dearer they slow the build, which is what the measurement weighs.
        AllocationOptions options = HugePagePolicy.DefaultFor<NativeRecord>(count);
        _rows = new HugeArray<NativeRecord>(count, options);
        _scores = new HugeArray<double>(count, options);
        _rowOf = new NativeHashIndex<long>(count, options);
        _nameColumn = new HugeArray<StoredUtf8String>(count, options);
        _names = new Utf8StringStore(16 << 20, options);
        // A chunk at a time: the columns written through one lease each instead of a checked indexer
        // call per element, the chunk's names stored and its ids indexed in one bulk write each.
        const int Chunk = 4096;
        var ids = new long[Chunk];
        var rowNumbers = new long[Chunk];
        var names = new string[Chunk];
        for (long first = 0; first < count; first += Chunk)
        {
            int size = (int)Math.Min(Chunk, count - first);
            using (MemoryLease<NativeRecord> rows = _rows.Lease())
            using (MemoryLease<double> scores = _scores.Lease())
            using (MemoryLease<StoredUtf8String> nameColumn = _nameColumn.Lease())
            {
                Span<NativeRecord> rowSpan = rows.AsSpan(first, size);
                Span<double> scoreSpan = scores.AsSpan(first, size);
                for (int i = 0; i < size; i++)
                {
                    long id = RecordData.IdOf(first + i);
                    ids[i] = id;
                    rowNumbers[i] = first + i;
                    rowSpan[i] = new NativeRecord { Id = id, Category = RecordData.CategoryOf(id), Updated = RecordData.UpdatedOf(id) };
                    scoreSpan[i] = RecordData.ScoreOf(id);
                    names[i] = RecordData.NameOf(id, 0);
                }

                _names.AddRange(names.AsSpan(0, size), nameColumn.AsSpan(first, size));
            }

            _rowOf.AddRange(ids.AsSpan(0, size), rowNumbers.AsSpan(0, size));
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
    public string NameOf(long id) => _nameColumn[_rowOf[id]].ToString();

    /// <inheritdoc/>
    public int Scan(long start, int count, double min, double max, int prefix, ref long idSum)
    {
        if (_matches.Length < count)
        {
            _matches = new int[count];
        }

        ReadOnlySpan<byte> wanted = RecordData.Utf8Prefixes[prefix];
        int found = ColumnScan.FindInRange(_scores, start, count, min, max, _matches);
        // The candidates' names through one lease of the name column and one read scope of the store
        // (the column scan fetches the names some candidates ahead), then the ids of the matches.
        using MemoryLease<NativeRecord> rows = _rows.Lease();
        using MemoryLease<StoredUtf8String> names = _nameColumn.Lease();
        using StringStoreReadScope scope = _names.EnterRead();
        Span<int> candidates = _matches.AsSpan(0, found);
        int matches = ColumnScan.KeepStartingWith(names.AsSpan(start, count), candidates, wanted);
        ReadOnlySpan<NativeRecord> window = rows.AsSpan(start, count);
        foreach (int match in candidates[..matches])
        {
            idSum += window[match].Id;
        }

        return matches;
    }

    /// <inheritdoc/>
    public void Rename(long row, string name) => _nameColumn[row] = _names.Replace(_nameColumn[row], name);

    /// <inheritdoc/>
    public void Dispose()
    {
        _rowOf.Dispose();
        _names.Dispose();
        _scores.Dispose();
        _nameColumn.Dispose();
        _rows.Dispose();
    }
}
