using System.Reflection;
using System.Text.RegularExpressions;
using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Running;
using jemalloc.Benchmarks.Infrastructure;
using jemalloc.Cli.Options;

namespace jemalloc.Cli.Commands;

/// <summary><c>jembench micro</c>: runs the micro-benchmarks of namespace <c>jemalloc.Benchmarks.Micro</c>.</summary>
public static class MicroCommand
{
    /// <summary>The namespace the micro-benchmarks live in.</summary>
    public const string MicroNamespace = "jemalloc.Benchmarks.Micro";

    /// <summary>The namespace of the interop micro-benchmarks (how jemalloc is called), also run by <c>micro</c>.</summary>
    public const string InteropNamespace = "jemalloc.Benchmarks.Interop";

    /// <summary>The benchmark classes in <see cref="MicroNamespace"/> and <see cref="InteropNamespace"/>.</summary>
    public static IReadOnlyList<Type> MicroBenchmarkTypes() =>
        [.. typeof(SuiteRunner).Assembly.GetTypes()
            .Where(t => t.Namespace is MicroNamespace or InteropNamespace && t is { IsClass: true, IsAbstract: false, IsGenericTypeDefinition: false } &&
                        t.GetMethods().Any(m => m.GetCustomAttribute<BenchmarkAttribute>() is not null))
            .OrderBy(t => t.Name, StringComparer.Ordinal)];

    /// <summary>Lists or runs the micro-benchmarks matching the filter.</summary>
    /// <exception cref="CommandLineException">There are none, or none match.</exception>
    public static int Run(MicroOptions options, TextWriter output)
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentNullException.ThrowIfNull(output);
        RunSettings settings = options.ToRunSettings();
        bool tiered = MicroJit.AsksForTiered(options.Jit);
        IReadOnlyList<Type> types = MicroBenchmarkTypes();
        if (types.Count == 0)
        {
            throw new CommandLineException($"micro: this build has no micro-benchmarks (no benchmark classes in namespace {MicroNamespace}).");
        }

        string[] filters = [.. (options.Filter ?? "").Split(' ', StringSplitOptions.RemoveEmptyEntries), .. options.Patterns];
        if (filters.Length == 0)
        {
            filters = ["*"];
        }

        if (options.List)
        {
            // BenchmarkDotNet matches a pattern against Namespace.Type.Method; so does the list.
            Regex[] globs = [.. filters.Select(f => new Regex("^" + Regex.Escape(f).Replace(@"\*", ".*", StringComparison.Ordinal).Replace(@"\?", ".", StringComparison.Ordinal) + "$", RegexOptions.CultureInvariant))];
            foreach (Type type in types.Where(t => t.GetMethods().Any(m => m.GetCustomAttribute<BenchmarkAttribute>() is not null && globs.Any(g => g.IsMatch($"{t.FullName}.{m.Name}")))))
            {
                output.WriteLine(type.FullName);
            }

            return Program.ExitSuccess;
        }

        // Measured here only when this process's environment settles its mode; otherwise in a process started with it set.
        if (MicroJit.ThisProcessRunsTiered() != tiered)
        {
            return MicroJit.RunInProcessOfMode(tiered, output);
        }

        output.WriteLine(MicroJit.Describe(MicroJit.ThisProcessRunsTiered() == true));
        if (settings.Conf is string conf)
        {
            JemConfiguration.Apply(conf);
        }

        var config = JemBenchConfig.Create(settings, [], JemBenchConfig.InProcessJob(settings));
        SuiteRunner.Start();
        var summaries = BenchmarkSwitcher.FromTypes([.. types]).Run(["--filter", .. filters], config).ToList();
        if (summaries.Count == 0 || summaries.All(s => s.BenchmarksCases.Length == 0))
        {
            throw new CommandLineException($"micro: no micro-benchmark matches the filter {string.Join(" ", filters)}; 'jembench micro --list' shows them.");
        }

        return SuiteCommands.Report(SuiteRunner.Outcome(summaries), output);
    }
}
