namespace jemalloc.Benchmarks.Records;

/// <summary>The <c>class</c> side: <see cref="ClassRecord"/> objects in a <see cref="List{T}"/> and a <see cref="Dictionary{TKey, TValue}"/> by id.</summary>
public sealed class ClassRecordTable : IRecordTable
{
    private readonly List<ClassRecord> _rows;
    private readonly Dictionary<long, ClassRecord> _byId;

    /// <summary>Builds the table of <paramref name="count"/> records.</summary>
    public ClassRecordTable(int count)
    {
        _rows = new List<ClassRecord>(count);
        _byId = new Dictionary<long, ClassRecord>(count);
        for (int row = 0; row < count; row++)
        {
            long id = RecordData.IdOf(row);
            var record = new ClassRecord
            {
                Id = id,
                Name = RecordData.NameOf(id, 0),
                Category = RecordData.CategoryOf(id),
                Score = RecordData.ScoreOf(id),
                Updated = RecordData.UpdatedOf(id),
            };
            _rows.Add(record);
            _byId.Add(id, record);
        }
    }

    /// <inheritdoc/>
    public long Count => _rows.Count;

    /// <inheritdoc/>
    public void Lookup(ReadOnlySpan<long> ids, Span<RecordLookup> results)
    {
        for (int i = 0; i < ids.Length; i++)
        {
            results[i] = _byId.TryGetValue(ids[i], out ClassRecord? record)
                ? new RecordLookup(true, record.Category, record.Score, record.Updated)
                : default;
        }
    }

    /// <inheritdoc/>
    public string NameOf(long id) => _byId[id].Name;

    /// <inheritdoc/>
    public int Scan(long start, int count, double min, double max, int prefix, ref long idSum)
    {
        string wanted = RecordData.Prefixes[prefix];
        int matches = 0;
        for (int i = (int)start, end = (int)start + count; i < end; i++)
        {
            ClassRecord record = _rows[i];
            if (record.Score >= min && record.Score <= max && record.Name.StartsWith(wanted, StringComparison.Ordinal))
            {
                matches++;
                idSum += record.Id;
            }
        }

        return matches;
    }

    /// <inheritdoc/>
    public void Rename(long row, string name) => _rows[(int)row].Name = name;

    /// <inheritdoc/>
    public void Dispose()
    {
    }
}
