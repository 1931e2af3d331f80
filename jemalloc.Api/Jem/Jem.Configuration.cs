using jemalloc.Configuration;
using jemalloc.Interop;

namespace jemalloc;

public static partial class Jem
{
    /// <summary>
    /// Sets jemalloc's options (a <c>malloc_conf</c> string such as <c>narenas:2,dirty_decay_ms:0</c>)
    /// for when the library loads. jemalloc reads its options once, while it loads, so this must be
    /// called before the first jemalloc call; a later call replaces an earlier one. Equivalent to
    /// setting the <c>JE_MALLOC_CONF</c> environment variable before the process starts.
    /// </summary>
    /// <remarks>
    /// jemalloc ignores an unknown option or a bad value (it prints <c>&lt;jemalloc&gt;: Invalid conf pair</c>
    /// to standard error while loading): use <see cref="GetConfigurationReport()"/> afterwards to see
    /// which options were rejected. <c>abort</c> and <c>abort_conf</c> with any value but <c>false</c> are refused (see <see cref="ValidateConfiguration(string)"/>),
    /// because set to true they make jemalloc end the process on a warning or a bad option instead of reporting it.
    /// </remarks>
    /// <param name="conf">Comma-separated <c>key:value</c> pairs.</param>
    /// <exception cref="ArgumentNullException"><paramref name="conf"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="conf"/> is not a list of <c>key:value</c> pairs, or sets <c>abort</c>/<c>abort_conf</c> to anything but <c>false</c> (see <see cref="ValidateConfiguration(string)"/>).</exception>
    /// <exception cref="InvalidOperationException">The library has already loaded (its options can no longer change).</exception>
    public static void Init(string conf)
    {
        ValidateConfiguration(conf);
        NativeLibraryLoader.SetConfiguration(conf);
    }

    /// <summary>
    /// The environment variable jemalloc reads its options from (<c>JE_MALLOC_CONF</c>: with the
    /// <c>je_</c> prefix, plain <c>MALLOC_CONF</c> is ignored). Set it before the process starts.
    /// </summary>
    public const string ConfigurationVariable = NativeLibraryLoader.ConfigurationVariable;

    /// <summary>
    /// Checks a <c>malloc_conf</c> string the way <see cref="Init(string)"/> does, for tools that pass
    /// it on otherwise (e.g. in <see cref="ConfigurationVariable"/> of a child process): a list of
    /// <c>key:value</c> pairs jemalloc can parse, without <c>abort</c> or <c>abort_conf</c> set to anything but <c>false</c>.
    /// </summary>
    /// <remarks>
    /// <c>abort</c> and <c>abort_conf</c> are refused with any value but <c>false</c> (their default, accepted):
    /// set to true they make jemalloc end the process on a warning or a mistyped option instead of reporting it.
    /// </remarks>
    /// <param name="conf">Comma-separated <c>key:value</c> pairs.</param>
    /// <exception cref="ArgumentNullException"><paramref name="conf"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="conf"/> is not a list of <c>key:value</c> pairs, or sets <c>abort</c>/<c>abort_conf</c> to anything but <c>false</c>.</exception>
    public static void ValidateConfiguration(string conf)
    {
        ArgumentNullException.ThrowIfNull(conf);
        foreach ((string key, string value) in ParseConfiguration(conf))
        {
            // Only "false" (the default) is harmless; anything else is "true" or a value jemalloc does not
            // read as a boolean, most likely meant as true.
            if (key is "abort" or "abort_conf" && value is not "false")
            {
                throw new ArgumentException(
                    $"'{key}:{value}' is not accepted: set to true, it would make jemalloc end the process instead of reporting a problem. Only '{key}:false' (its default) is accepted.", nameof(conf));
            }
        }
    }

    /// <summary>The options given to <see cref="Init(string)"/>, or else the <c>JE_MALLOC_CONF</c> environment variable; null when neither.</summary>
    public static string? RequestedConfiguration =>
        NativeLibraryLoader.RequestedConfiguration ?? Environment.GetEnvironmentVariable(ConfigurationVariable);

    /// <summary>
    /// Compares the options jemalloc was started with (<see cref="RequestedConfiguration"/>) with the
    /// values it uses (<c>opt.*</c>), telling which were applied and which were rejected (and which were
    /// given twice, the later value winning). Loads the library if it is not loaded yet.
    /// </summary>
    /// <exception cref="ArgumentException"><see cref="RequestedConfiguration"/> (from <c>JE_MALLOC_CONF</c>) is not a list of <c>key:value</c> pairs.</exception>
    /// <exception cref="JemLibraryException">The native library could not be loaded.</exception>
    public static JemConfigurationReport GetConfigurationReport() => CheckConfiguration(RequestedConfiguration ?? string.Empty);

    /// <summary>
    /// Compares each option of <paramref name="conf"/> with the value jemalloc uses (<c>opt.&lt;key&gt;</c>):
    /// <see cref="JemOptionStatus.Applied"/> where they are equal; <see cref="JemOptionStatus.Rejected"/> for an
    /// unknown key, a value the option does not take, or a value this process was started with that jemalloc
    /// refused; <see cref="JemOptionStatus.DiffersFromProcess"/> for a valid value this process was not started
    /// with; <see cref="JemOptionStatus.Overridden"/> for a key given again later in <paramref name="conf"/>.
    /// </summary>
    /// <param name="conf">Comma-separated <c>key:value</c> pairs; empty for none.</param>
    /// <exception cref="ArgumentNullException"><paramref name="conf"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="conf"/> is not a list of <c>key:value</c> pairs.</exception>
    /// <exception cref="JemLibraryException">The native library could not be loaded.</exception>
    public static JemConfigurationReport CheckConfiguration(string conf)
    {
        ArgumentNullException.ThrowIfNull(conf);
        var checks = new List<JemOptionCheck>();
        if (!string.IsNullOrEmpty(conf))
        {
            List<(string Key, string Value)> pairs = ParseConfiguration(conf);
            Dictionary<string, string> started = StartedOptions();
            var last = new Dictionary<string, int>(StringComparer.Ordinal);
            for (int i = 0; i < pairs.Count; i++)
            {
                last[pairs[i].Key] = i;
            }

            foreach ((string key, string value) in pairs)
            {
                bool givenAtStart = started.TryGetValue(key, out string? startValue) && startValue == value;
                checks.Add(JemOptionCatalog.Check(key, value, givenAtStart));
            }

            // jemalloc reads the pairs in order: a key given again replaces the earlier value, which is no error.
            for (int i = 0; i < pairs.Count; i++)
            {
                (string key, string value) = pairs[i];
                int final = last[key];
                if (final != i && JemOptionCatalog.IsOption(key))
                {
                    checks[i] = new JemOptionCheck(key, value, checks[final].EffectiveValue, JemOptionStatus.Overridden,
                        $"{key} is given again later ({key}:{pairs[final].Value}); jemalloc uses the later value");
                }
            }
        }

        return new JemConfigurationReport(conf, checks);
    }

    // The last value of each key this process's jemalloc was started with; empty when that text is not a
    // configuration (jemalloc then read none of it as asked, so nothing of it counts as given).
    private static Dictionary<string, string> StartedOptions()
    {
        var started = new Dictionary<string, string>(StringComparer.Ordinal);
        string? requested = RequestedConfiguration;
        if (string.IsNullOrWhiteSpace(requested))
        {
            return started;
        }

        try
        {
            foreach ((string key, string value) in ParseConfiguration(requested))
            {
                started[key] = value;
            }
        }
        catch (ArgumentException)
        {
            started.Clear();
        }

        return started;
    }

    /// <summary>Splits <c>key:value,key:value</c> as jemalloc does, rejecting what jemalloc could not parse.</summary>
    /// <remarks>
    /// Values are limited to letters, digits and <c>_ . - / +</c> (numbers, names, paths): anything
    /// else is not a value any option takes, and is more likely text that should not be here.
    /// </remarks>
    private static List<(string Key, string Value)> ParseConfiguration(string conf)
    {
        if (string.IsNullOrWhiteSpace(conf))
        {
            throw NotAConfiguration(conf, "it is empty");
        }

        var pairs = new List<(string, string)>();
        foreach (string pair in conf.Split(','))
        {
            int colon = pair.IndexOf(':', StringComparison.Ordinal);
            string key = colon < 0 ? pair : pair[..colon];
            if (colon <= 0 || colon == pair.Length - 1)
            {
                throw NotAConfiguration(conf, $"'{pair}' is not a key:value pair");
            }

            if (!key.All(c => char.IsAsciiLetterOrDigit(c) || c == '_'))
            {
                throw NotAConfiguration(conf, $"'{key}' is not a valid option name (letters, digits and '_' only)");
            }

            string value = pair[(colon + 1)..];
            if (!value.All(c => char.IsAsciiLetterOrDigit(c) || c is '_' or '.' or '-' or '/' or '+'))
            {
                throw NotAConfiguration(conf, $"the value of '{key}' may only contain letters, digits and '_', '.', '-', '/', '+'");
            }

            pairs.Add((key, value));
        }

        return pairs;
    }

    private static ArgumentException NotAConfiguration(string conf, string reason) =>
        new($"'{conf}' is not a jemalloc configuration: {reason}. Expected key:value pairs separated by commas, e.g. 'narenas:2,dirty_decay_ms:0'.", nameof(conf));
}
