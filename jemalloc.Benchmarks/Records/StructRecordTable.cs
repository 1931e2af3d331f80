namespace jemalloc.Benchmarks.Records;

/// <summary>
/// The <c>struct</c> side, the best managed layout that still uses <see cref="string"/>:
/// <see cref="StructRecord"/>s in one array, the scores in a column of their own (scanned with
/// <see cref="ColumnScan"/> like the native side), and a <see cref="Dictionary{TKey, TValue}"/> from id to row.
/// </summary>
public sealed class StructRecordTable : IRecordTable
{
    private readonly StructRecord[] _rows;
    private readonly double[] _scores;
    private readonly Dictionary<long, int> _rowOf;
    private int[] _matches = [];

    /// <summary>Builds the table of <paramref name="count"/> records.</summary>
    public StructRecordTable(int count)
    {
        _rows = new StructRecord[count];
        _scores = new double[count];
        _rowOf = new Dictionary<long, int>(count);
        for (int row = 0; row < count; row++)
        {
            long id = RecordData.IdOf(row);
            _rows[row] = new StructRecord { Id = id, Name = RecordData.NameOf(id, 0), Category = RecordData.CategoryOf(id), Updated = RecordData.UpdatedOf(id) };
            _scores[row] = RecordData.ScoreOf(id);
            _rowOf.Add(id, row);
        }
    }

    /// <inheritdoc/>
    public long Count => _rows.Length;

    /// <inheritdoc/>
    public void Lookup(ReadOnlySpan<long> ids, Span<RecordLookup> results)
    {
        for (int i = 0; i < ids.Length; i++)
        {
            if (_rowOf.TryGetValue(ids[i], out int row))
            {
                ref StructRecord record = ref _rows[row];
                results[i] = new RecordLookup(true, record.Category, _scores[row], record.Updated);
            }
            else
            {
                results[i] = default;
            }
        }
    }

    /// <inheritdoc/>
    public string NameOf(long id) => _rows[_rowOf[id]].Name;

    /// <inheritdoc/>
    public int Scan(long start, int count, double min, double max, int prefix, ref long idSum)
    {
        if (_matches.Length < count)
        {
            _matches = new int[count];
        }

        string wanted = RecordData.Prefixes[prefix];
        int found = ColumnScan.FindInRange(_scores.AsSpan((int)start, count), min, max, _matches);
        int matches = 0;
        for (int m = 0; m < found; m++)
        {
            ref StructRecord record = ref _rows[(int)start + _matches[m]];
            if (record.Name.StartsWith(wanted, StringComparison.Ordinal))
            {
                matches++;
                idSum += record.Id;
            }
        }

        return matches;
    }

    /// <inheritdoc/>
    public void Rename(long row, string name) => _rows[row].Name = name;

    /// <inheritdoc/>
    public void Dispose()
    {
    }
}
