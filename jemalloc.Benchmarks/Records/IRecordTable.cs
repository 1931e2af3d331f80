namespace jemalloc.Benchmarks.Records;

/// <summary>One side of <c>jembench records</c>: the same table in a different layout.</summary>
public interface IRecordTable : IDisposable
{
    /// <summary>The number of records.</summary>
    long Count { get; }

    /// <summary>Looks each id of <paramref name="ids"/> up, writing what it found at the same position of <paramref name="results"/> (as long as <paramref name="ids"/>).</summary>
    void Lookup(ReadOnlySpan<long> ids, Span<RecordLookup> results);

    /// <summary>The name of the record with <paramref name="id"/> as a .NET string (what a response would carry).</summary>
    string NameOf(long id);

    /// <summary>Counts the rows in [start, start+count) whose score is in [min, max] and whose name starts with prefix number <paramref name="prefix"/>; adds their ids to <paramref name="idSum"/>.</summary>
    int Scan(long start, int count, double min, double max, int prefix, ref long idSum);

    /// <summary>Gives row <paramref name="row"/> a new name.</summary>
    void Rename(long row, string name);
}
