namespace jemalloc;

/// <summary>A mallctl name resolved against <see cref="MallctlCatalog"/>.</summary>
/// <param name="Name">The name as called, e.g. <c>arena.3.reset</c>.</param>
/// <param name="Pattern">The name with numbers as <c>{i}</c>, e.g. <c>arena.{i}.reset</c>.</param>
/// <param name="Type">The C type of the value.</param>
/// <param name="Index">The first numeric component (the arena of <c>arena.{i}.*</c>), or <see cref="uint.MaxValue"/>.</param>
internal readonly record struct MallctlTarget(string Name, string Pattern, MallctlCType Type, uint Index)
{
    /// <summary>Resolves <paramref name="name"/>.</summary>
    internal static MallctlTarget Resolve(string name)
    {
        string pattern = MallctlCatalog.Normalize(name, out uint index);
        return new(name, pattern, MallctlCatalog.TypeOf(pattern), index);
    }
}
