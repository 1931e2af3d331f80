namespace jemalloc;

/// <summary>
/// The mallctl keys whose C type is <c>const char*</c>. A string read of any other key would make
/// .NET dereference a number as a pointer, so string access is refused for keys not listed here.
/// </summary>
internal static class MallctlStringKeys
{
    /// <summary>jemalloc 5.3's string keys, with numeric components written as <c>{i}</c>.</summary>
    private static readonly HashSet<string> Keys = new(StringComparer.Ordinal)
    {
        "version",
        "config.malloc_conf",
        "opt.dss",
        "opt.junk",
        "opt.thp",
        "opt.metadata_thp",
        "opt.percpu_arena",
        "opt.stats_print_opts",
        "opt.stats_interval_opts",
        "opt.prof_prefix",
        "opt.prof_time_resolution",
        "opt.zero_realloc",
        "thread.prof.name",
        "arena.{i}.dss",
        "stats.arenas.{i}.dss",
        "prof.dump",
        "prof.prefix",
        "prof.log_start",
    };

    /// <summary>Whether <paramref name="name"/> is a key of type <c>const char*</c>.</summary>
    internal static bool Contains(string name)
    {
        if (Keys.Contains(name))
        {
            return true;
        }

        string[] parts = name.Split('.');
        for (int i = 0; i < parts.Length; i++)
        {
            if (parts[i].Length > 0 && parts[i].All(char.IsAsciiDigit))
            {
                parts[i] = "{i}";
            }
        }

        return Keys.Contains(string.Join('.', parts));
    }

    /// <summary>Throws when <paramref name="name"/> is not a string key.</summary>
    /// <exception cref="MallctlException"><paramref name="name"/> is not a key of type <c>const char*</c>.</exception>
    internal static void ThrowIfNotString(string name)
    {
        if (!Contains(name))
        {
            throw new MallctlException(name, MallctlError.InvalidValue,
                "It is not a string (const char*) key; read it with its numeric or bool type instead.");
        }
    }
}
