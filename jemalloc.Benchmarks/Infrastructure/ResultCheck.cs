namespace jemalloc.Benchmarks.Infrastructure;

/// <summary>One check of a benchmark's result, made after its measured run.</summary>
/// <param name="Benchmark">The benchmark that was checked.</param>
/// <param name="Description">What was compared.</param>
/// <param name="Passed">Whether the result was right.</param>
public sealed record ResultCheck(string Benchmark, string Description, bool Passed);
