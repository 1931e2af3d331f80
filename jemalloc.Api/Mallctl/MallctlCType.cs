namespace jemalloc.Mallctl;

/// <summary>The C type of a mallctl key's value, as jemalloc 5.3 declares it.</summary>
internal enum MallctlCType
{
    /// <summary>Not in the catalog (jemalloc answers <c>ENOENT</c>, or a plain statistic the catalog does not list).</summary>
    Unknown,

    /// <summary>C <c>bool</c>, 1 byte.</summary>
    Bool,

    /// <summary>C <c>unsigned</c>, 4 bytes.</summary>
    Unsigned,

    /// <summary>C <c>uint32_t</c> (including jemalloc's fixed-point <c>fxp_t</c>), 4 bytes.</summary>
    UInt32,

    /// <summary>C <c>uint64_t</c>, 8 bytes.</summary>
    UInt64,

    /// <summary>C <c>int64_t</c>, 8 bytes.</summary>
    Int64,

    /// <summary>C <c>size_t</c>.</summary>
    SizeT,

    /// <summary>C <c>ssize_t</c>.</summary>
    SSizeT,

    /// <summary>C <c>const char*</c>.</summary>
    String,

    /// <summary>An action that takes and returns nothing.</summary>
    Command,

    /// <summary>Takes or returns a raw pointer (hooks, callbacks, pointers into jemalloc's memory): refused by the typed API.</summary>
    Pointer,

    /// <summary>A C struct the typed API has no .NET type for: refused by the typed API.</summary>
    Struct,
}
