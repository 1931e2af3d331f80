namespace jemalloc.Benchmarks.Infrastructure;

/// <summary>
/// The user-defined struct of the <c>--udt</c> benchmarks: a fixed-size employee record with only
/// unmanaged fields, so it can live in native memory.
/// </summary>
/// <param name="Id">The employee's id.</param>
/// <param name="BirthDateTicks">The date of birth, as <see cref="DateTime.Ticks"/>.</param>
/// <param name="Salary">The salary.</param>
/// <param name="Grade">The pay grade.</param>
public readonly record struct Employee(Guid Id, long BirthDateTicks, decimal Salary, int Grade)
{
    /// <summary>The record every <c>--udt</c> benchmark writes and checks.</summary>
    public static Employee Sample { get; } = new(new Guid("0f8fad5b-d9cb-469f-a165-70867728950e"), new DateTime(1984, 4, 1, 0, 0, 0, DateTimeKind.Utc).Ticks, 2131m, 7);
}
