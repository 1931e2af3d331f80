namespace jemalloc.Benchmarks.Records;

/// <summary>A record as a struct in an array: the best managed layout that still uses <see cref="string"/> (the score is a column of its own).</summary>
public struct StructRecord
{
    /// <summary>The id.</summary>
    public long Id { get; set; }

    /// <summary>The name: still one managed object per record.</summary>
    public string Name { get; set; }

    /// <summary>The category.</summary>
    public int Category { get; set; }

    /// <summary>The last update.</summary>
    public DateTime Updated { get; set; }
}
