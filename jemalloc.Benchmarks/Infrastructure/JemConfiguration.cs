using System.Text.RegularExpressions;

namespace jemalloc.Benchmarks.Infrastructure;

/// <summary>
/// Starts jemalloc with a <c>malloc_conf</c> string. jemalloc reads its options once, while the
/// library loads, from the native environment variable <c>JE_MALLOC_CONF</c>: it must be set before
/// the first jemalloc call of the process.
/// </summary>
public static partial class JemConfiguration
{
    /// <summary>
    /// Checks <paramref name="conf"/> and puts it in the native environment of this process (and of
    /// the processes it starts), so jemalloc reads it when it loads.
    /// </summary>
    /// <exception cref="ArgumentException"><paramref name="conf"/> is not a list of <c>key:value</c> pairs, or sets <c>abort_conf</c>.</exception>
    /// <exception cref="InvalidOperationException">jemalloc is already loaded, so the options would be ignored.</exception>
    public static void Apply(string conf)
    {
        Validate(conf);
        Jem.Init(conf);

        // Jem.Init sets the native environment; .NET keeps its own copy, which is what child processes inherit.
        Environment.SetEnvironmentVariable(JemBenchConfig.ConfVariable, conf);
    }

    /// <summary>Checks that <paramref name="conf"/> is a list of <c>key:value</c> pairs jemalloc can parse.</summary>
    /// <exception cref="ArgumentException">It is not, or it sets <c>abort_conf</c> (which would let a typo kill the process).</exception>
    public static void Validate(string conf)
    {
        ArgumentNullException.ThrowIfNull(conf);
        if (!ConfPattern().IsMatch(conf))
        {
            throw new ArgumentException(
                $"'{conf}' is not a jemalloc configuration: expected key:value pairs separated by commas, e.g. \"narenas:2,dirty_decay_ms:0\".", nameof(conf));
        }

        if (conf.Split(',').Any(pair => pair.StartsWith("abort_conf:", StringComparison.Ordinal)))
        {
            throw new ArgumentException("abort_conf cannot be set from jembench: with it, one mistyped option would abort the process.", nameof(conf));
        }
    }

    [GeneratedRegex(@"^[a-z_]+:[A-Za-z0-9_.\-]+(,[a-z_]+:[A-Za-z0-9_.\-]+)*$")]
    private static partial Regex ConfPattern();
}
