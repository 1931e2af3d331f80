namespace jemalloc;

/// <summary>What became of one option of a <c>malloc_conf</c> string.</summary>
public enum JemOptionStatus
{
    /// <summary>jemalloc's effective value (<c>opt.&lt;key&gt;</c>) equals the value asked for.</summary>
    Applied,

    /// <summary>
    /// jemalloc ignores the option: the key is not an option of this jemalloc (or its feature is not
    /// built in), the value is not one the option takes, or, for the options this process was started
    /// with, jemalloc did not accept the value (out of range), so the effective value differs.
    /// </summary>
    Rejected,

    /// <summary>A real jemalloc option that has no <c>opt.&lt;key&gt;</c> to read back, so it cannot be checked.</summary>
    NotVerifiable,

    /// <summary>
    /// The key is given again later in the same string: jemalloc reads the pairs in order, so the later
    /// value replaces this one (which is not an error, and is not checked on its own).
    /// </summary>
    Overridden,

    /// <summary>
    /// A valid option whose value differs from the one this process uses, because the process was not
    /// started with it (<see cref="Jem.CheckConfiguration(string)"/> of another string): jemalloc refused
    /// nothing, and only a process started with the value can tell whether jemalloc accepts it.
    /// </summary>
    DiffersFromProcess,
}
