namespace jemalloc;

/// <summary>What became of one option of a <c>malloc_conf</c> string.</summary>
public enum JemOptionStatus
{
    /// <summary>jemalloc's effective value (<c>opt.&lt;key&gt;</c>) equals the value asked for.</summary>
    Applied,

    /// <summary>
    /// jemalloc ignored the option: the key is not an option of this jemalloc (or its feature is not
    /// built in), or the value was invalid or out of range, so the effective value differs.
    /// </summary>
    Rejected,

    /// <summary>A real jemalloc option that has no <c>opt.&lt;key&gt;</c> to read back, so it cannot be checked.</summary>
    NotVerifiable,
}
