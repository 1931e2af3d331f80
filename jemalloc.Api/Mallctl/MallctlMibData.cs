namespace jemalloc.Mallctl;

/// <summary>
/// The immutable name and components behind a <see cref="MallctlMib{T}"/>: one object, so the struct
/// holds one reference and a racy copy of it can never pair one key's name with another's components.
/// </summary>
internal sealed class MallctlMibData(string name, nuint[] mib)
{
    /// <summary>The name the MIB was looked up from.</summary>
    internal string Name { get; } = name;

    /// <summary>The MIB's components, never changed after construction (WithIndex copies them).</summary>
    internal nuint[] Mib { get; } = mib;
}
