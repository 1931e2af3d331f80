namespace jemalloc.Internal;

/// <summary>Type names as messages show them.</summary>
internal static class TypeNames
{
    /// <summary>
    /// A type's name without the arity the runtime appends to a generic one: "SafeArray", not
    /// "SafeArray`1". Allocates for a generic type: for throw paths.
    /// </summary>
    internal static string Of(Type type)
    {
        string name = type.Name;
        int tick = name.IndexOf('`', StringComparison.Ordinal);
        return tick < 0 ? name : name[..tick];
    }
}
