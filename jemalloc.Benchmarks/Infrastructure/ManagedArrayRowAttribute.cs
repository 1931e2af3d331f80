namespace jemalloc.Benchmarks.Infrastructure;

/// <summary>
/// Marks a structure benchmark that works on a managed array: it processes the element count of
/// the run, or <see cref="Array.MaxLength"/> elements when that is smaller (the largest managed
/// array), which <see cref="PerElementColumn"/> divides by.
/// </summary>
[AttributeUsage(AttributeTargets.Method, Inherited = true)]
public sealed class ManagedArrayRowAttribute : Attribute;
