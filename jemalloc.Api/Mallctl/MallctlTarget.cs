namespace jemalloc.Mallctl;

/// <summary>A mallctl name resolved against <see cref="MallctlCatalog"/>.</summary>
/// <param name="Name">The name as called, e.g. <c>arena.3.reset</c>.</param>
/// <param name="Pattern">The name with numbers as <c>{i}</c>, e.g. <c>arena.{i}.reset</c>.</param>
/// <param name="Type">The C type of the value.</param>
/// <param name="Index">The first numeric component (the arena of <c>arena.{i}.*</c>), or <see cref="uint.MaxValue"/>.</param>
internal readonly record struct MallctlTarget(string Name, string Pattern, MallctlCType Type, uint Index)
{
    /// <summary>Resolves <paramref name="name"/>.</summary>
    /// <exception cref="MallctlException"><paramref name="name"/> is null (a <see langword="default"/> key, command or MIB), or jemalloc would read it as another key.</exception>
    internal static MallctlTarget Resolve(string name)
    {
        if (name is null)
        {
            throw new MallctlException("This mallctl key has no name: it is a default MallctlKey, MallctlCommand or MallctlMib. Make one from a name (MallctlKeys, new MallctlKey<T>(name), Jem.MallctlNameToMib).");
        }

        string pattern = MallctlCatalog.Normalize(name, out uint index);
        return new(name, pattern, MallctlCatalog.TypeOf(pattern), index);
    }
}
