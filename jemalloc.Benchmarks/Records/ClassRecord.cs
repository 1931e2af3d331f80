namespace jemalloc.Benchmarks.Records;

/// <summary>A record as a class: the usual managed layout, one object per record plus its name.</summary>
public sealed class ClassRecord
{
    /// <summary>The id.</summary>
    public long Id { get; init; }

    /// <summary>The name.</summary>
    public required string Name { get; set; }

    /// <summary>The category.</summary>
    public int Category { get; init; }

    /// <summary>The score.</summary>
    public double Score { get; init; }

    /// <summary>The last update.</summary>
    public DateTime Updated { get; init; }
}
