namespace jemalloc.Benchmarks.Infrastructure;

/// <summary>
/// Starts jemalloc with a <c>malloc_conf</c> string. jemalloc reads its options once, while the
/// library loads, from the native environment variable <see cref="Jem.ConfigurationVariable"/>: it
/// must be set before the first jemalloc call of the process.
/// </summary>
public static class JemConfiguration
{
    /// <summary>
    /// Checks <paramref name="conf"/> and puts it in the native environment of this process (and of
    /// the processes it starts), so jemalloc reads it when it loads.
    /// </summary>
    /// <exception cref="ArgumentException"><paramref name="conf"/> is not a list of <c>key:value</c> pairs, or sets <c>abort</c>/<c>abort_conf</c>.</exception>
    /// <exception cref="InvalidOperationException">jemalloc is already loaded, so the options would be ignored.</exception>
    public static void Apply(string conf)
    {
        Jem.Init(conf);

        // Jem.Init sets the native environment; .NET keeps its own copy, which is what child processes inherit.
        Environment.SetEnvironmentVariable(Jem.ConfigurationVariable, conf);
    }

    /// <summary>Checks <paramref name="conf"/> with the library's own rule (<see cref="Jem.ValidateConfiguration(string)"/>).</summary>
    /// <exception cref="ArgumentNullException"><paramref name="conf"/> is null.</exception>
    /// <exception cref="ArgumentException">It is not a list of <c>key:value</c> pairs, or it sets <c>abort</c>/<c>abort_conf</c> (which would let a typo kill the process).</exception>
    public static void Validate(string conf) => Jem.ValidateConfiguration(conf);
}
