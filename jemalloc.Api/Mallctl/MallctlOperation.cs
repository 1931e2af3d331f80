namespace jemalloc.Mallctl;

/// <summary>What a mallctl call does with the key's value.</summary>
internal enum MallctlOperation
{
    /// <summary>Reads the value (old pointer and length set, no new value).</summary>
    Read,

    /// <summary>Writes the value (new value set, no old pointer).</summary>
    Write,

    /// <summary>Writes a value and reads the one it replaced, in one call.</summary>
    Exchange,

    /// <summary>Neither reads nor writes: runs an action.</summary>
    Command,
}
