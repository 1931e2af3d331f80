namespace jemalloc.Parquet.Tests;

/// <summary>
/// What reading a malformed corpus file gives, column by column: "duckdb" (read, and equal to DuckDB's
/// reading), "read" (read; DuckDB cannot read it, so the read is a documented silent one), "read, not as
/// DuckDB" (read, with values DuckDB reads otherwise: a documented silent read of a damaged column), or the name
/// of the exception the read throws. The key <see cref="Open"/> stands for the file itself, when opening
/// it throws.
/// </summary>
/// <param name="Why">What is wrong with the file, as its source describes it.</param>
/// <param name="Columns">The outcome of each column (or of opening the file).</param>
internal sealed record MalformedExpectation(string Why, IReadOnlyDictionary<string, string> Columns)
{
    /// <summary>The key of the outcome of opening the file.</summary>
    public const string Open = "(open)";

    /// <summary>The outcome of a read equal to DuckDB's.</summary>
    public const string SameAsDuckDb = "duckdb";

    /// <summary>The outcome of a read DuckDB cannot check.</summary>
    public const string SilentRead = "read";

    /// <summary>The outcome of a read whose values are not DuckDB's (each such column is listed with the reason).</summary>
    public const string DiffersFromDuckDb = "read, not as DuckDB";
}
