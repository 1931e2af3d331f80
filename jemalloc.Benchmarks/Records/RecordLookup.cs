namespace jemalloc.Benchmarks.Records;

/// <summary>What a lookup by id found: whether the record is there, and its fields a response carries.</summary>
/// <param name="Found">Whether the table holds the id.</param>
/// <param name="Category">The record's category (0 if not found).</param>
/// <param name="Score">The record's score (0 if not found).</param>
/// <param name="Updated">The record's last update (default if not found).</param>
public readonly record struct RecordLookup(bool Found, int Category, double Score, DateTime Updated);
