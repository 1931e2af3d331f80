using System.Globalization;
using System.Runtime.InteropServices;
using jemalloc.Benchmarks.Infrastructure;
using jemalloc.Cli.Options;

namespace jemalloc.Cli.Commands;

/// <summary><c>jembench info</c>: the jemalloc library, its effective options and its statistics.</summary>
public static class InfoCommand
{
    // The options worth seeing at a glance, with their C types (mallctl needs the exact size).
    private static readonly (string Name, char Kind)[] Options =
    [
        ("opt.narenas", 'u'), ("opt.percpu_arena", 's'), ("opt.dirty_decay_ms", 'z'), ("opt.muzzy_decay_ms", 'z'),
        ("opt.background_thread", 'b'), ("opt.max_background_threads", 'n'), ("opt.thp", 's'), ("opt.metadata_thp", 's'),
        ("opt.retain", 'b'), ("opt.tcache", 'b'), ("opt.tcache_max", 'n'), ("opt.tcache_nslots_small_min", 'u'),
        ("opt.tcache_nslots_small_max", 'u'), ("opt.tcache_nslots_large", 'u'), ("opt.lg_tcache_nslots_mul", 'z'),
        ("opt.oversize_threshold", 'n'), ("opt.zero", 'b'), ("opt.abort_conf", 'b'), ("opt.stats_print", 'b'),
        ("config.debug", 'b'), ("config.stats", 'b'), ("config.prof", 'b'), ("config.fill", 'b'),
    ];

    private static readonly (string Name, string Meaning)[] Statistics =
    [
        ("stats.allocated", "bytes in live allocations"),
        ("stats.active", "bytes in active pages"),
        ("stats.metadata", "bytes of allocator metadata"),
        ("stats.resident", "bytes in resident pages"),
        ("stats.mapped", "bytes in mapped memory"),
        ("stats.retained", "bytes retained (unmapped but reserved)"),
    ];

    /// <summary>Prints the information; with <c>--json</c>, jemalloc's whole report as JSON.</summary>
    /// <exception cref="CommandLineException">The configuration is not valid.</exception>
    public static int Run(InfoOptions options, TextWriter output)
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentNullException.ThrowIfNull(output);
        if (options.Conf is string conf)
        {
            try
            {
                JemConfiguration.Apply(conf);
            }
            catch (ArgumentException e)
            {
                throw new CommandLineException($"--conf: {e.Message.Split(" (Parameter")[0]}");
            }
        }

        string library = Jem.Load();
        if (options.Json)
        {
            output.Write(JemControl.StatisticsReport(json: true));
            output.WriteLine();
            return Program.ExitSuccess;
        }

        output.WriteLine($"jemalloc {JemControl.Version}");
        output.WriteLine($"library: {library}");
        // What this process runs on, as the runtime sees it (under an emulator: the emulated target).
        output.WriteLine($"runtime: {RuntimeInformation.RuntimeIdentifier} ({RuntimeInformation.OSDescription.Trim()}, {RuntimeInformation.ProcessArchitecture} process, .NET {Environment.Version})");
        output.WriteLine($"pages: jemalloc {Jem.PageSize.ToString("N0", CultureInfo.InvariantCulture)} bytes (compiled in), OS {Environment.SystemPageSize.ToString("N0", CultureInfo.InvariantCulture)} bytes");
        output.WriteLine($"transparent huge pages: {HugePageInfo.Mode}");
        output.WriteLine($"{Jem.ConfigurationVariable}: {Environment.GetEnvironmentVariable(Jem.ConfigurationVariable) ?? "(not set)"}");
        // Made now (a short measurement on a scratch block per size band), so that it can be shown with its figures.
        _ = FillPolicy.DecideAutomaticChoices();
        output.WriteLine($"fill policy: {FillPolicy.Describe()}");
        // Made now (two fresh 16 MiB probes touched a few times), so that it can be shown with its figures.
        _ = HugePagePolicy.Measure();
        output.WriteLine($"huge-page policy: {HugePagePolicy.Describe()}");
        output.WriteLine();
        output.WriteLine("Library settings (JemSettings):");
        foreach (string setting in JemSettings.Describe().Split('\n', StringSplitOptions.RemoveEmptyEntries))
        {
            output.WriteLine($"  {setting}");
        }

        output.WriteLine();
        output.WriteLine("Effective options:");
        foreach (var (name, kind) in Options)
        {
            output.WriteLine($"  {name,-32} {ReadOption(name, kind)}");
        }

        output.WriteLine();
        output.WriteLine("Statistics:");
        JemControl.RefreshStatistics();
        foreach (var (name, meaning) in Statistics)
        {
            output.WriteLine($"  {name,-32} {JemControl.ReadSize(name).ToString("N0", CultureInfo.InvariantCulture),16}  {meaning}");
        }

        output.WriteLine();
        output.WriteLine("Full report (malloc_stats_print):");
        output.Write(JemControl.StatisticsReport(json: false));
        output.WriteLine();
        return Program.ExitSuccess;
    }

    private static string ReadOption(string name, char kind)
    {
        try
        {
            return kind switch
            {
                'u' => JemControl.ReadUInt32(name).ToString(CultureInfo.InvariantCulture),
                'n' => JemControl.ReadSize(name).ToString(CultureInfo.InvariantCulture),
                'z' => JemControl.ReadSignedSize(name).ToString(CultureInfo.InvariantCulture),
                'b' => JemControl.ReadBool(name) ? "true" : "false",
                _ => JemControl.ReadString(name),
            };
        }
        catch (InvalidOperationException e)
        {
            return $"(unavailable: {e.Message})";
        }
    }
}
