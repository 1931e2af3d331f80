namespace jemalloc.Benchmarks.Infrastructure;

/// <summary>
/// Marks a benchmark class whose parameter named <c>Parameter</c> is the number of elements every
/// row processes (rows marked <see cref="ManagedArrayRowAttribute"/> at most
/// <see cref="Array.MaxLength"/>), so <see cref="PerElementColumn"/> can show time per element.
/// </summary>
[AttributeUsage(AttributeTargets.Class, Inherited = true)]
public sealed class ElementRowsAttribute : Attribute;
