using jemalloc.Cli.Tests.Verbs;
using jemalloc.Tests;

namespace jemalloc.Cli.Tests.Benchmarks;

/// <summary>
/// <c>jembench micro</c> measures in the JIT mode asked for, whatever the environment it starts in says
/// about tiered compilation. The runtime itself tells which mode a method was compiled in: with a perf
/// map, each compiled method is listed with its tier ([QuickJitted], [OptimizedTier1], ... under tiered
/// compilation; [Optimized] when every method is fully optimized at its first call).
/// </summary>
[Collection(JembenchRuns.Name)]
public sealed class MicroJitModeProcessTests : IDisposable
{
    private const string Benchmark = "jemalloc.Benchmarks.Micro.AllocationBenchmarks::MallocFree()";

    private static readonly TimeSpan Timeout = TimeSpan.FromMinutes(5);

    private readonly string _folder = Path.Combine(Path.GetTempPath(), "jembench-jit-" + Guid.NewGuid().ToString("N"));

    public void Dispose()
    {
        if (Directory.Exists(_folder))
        {
            Directory.Delete(_folder, recursive: true);
        }
    }

    [Theory]
    // Values the runtime reads as hexadecimal numbers (zero: tiering off) or cannot parse (jembench's own setting: off).
    [InlineData("DOTNET_TieredCompilation", "00", "tiered")]
    [InlineData("DOTNET_TieredCompilation", "0x0", "tiered")]
    [InlineData("DOTNET_TieredCompilation", "true", "tiered")]
    [InlineData("DOTNET_TieredCompilation", "0", "tiered")]
    [InlineData(null, null, "tiered")]
    // The runtime's older name turns tiering on when the DOTNET_ one is not set.
    [InlineData("COMPlus_TieredCompilation", "1", "full")]
    [InlineData("DOTNET_TieredCompilation", "0x1", "full")]
    [InlineData("DOTNET_TieredCompilation", "1", "full")]
    [InlineData(null, null, "full")]
    public void Micro_measures_in_the_jit_mode_asked_for_whatever_the_environment_says(string? variable, string? value, string jit)
    {
        var environment = new Dictionary<string, string?>
        {
            ["DOTNET_TieredCompilation"] = null,
            ["COMPlus_TieredCompilation"] = null,
            ["DOTNET_PerfMapEnabled"] = "3",
            ["DOTNET_PerfMapJitDumpPath"] = _folder,
            ["DOTNET_EnableWriteXorExecute"] = "0",
        };
        if (variable is not null)
        {
            environment[variable] = value;
        }

        Directory.CreateDirectory(_folder);
        ChildProcessRunner.Result result = JembenchProcess.Run(environment, Timeout,
            "micro", "--jit", jit, "--quick", "-e", "none", "--artifacts", Path.Combine(_folder, "artifacts"), "*AllocationBenchmarks.MallocFree*");
        Assert.True(result.ExitCode == Program.ExitSuccess, $"expected exit code {Program.ExitSuccess}: {result}");

        string[] tiers = [.. Directory.GetFiles(_folder, "perf-*.map")
            .SelectMany(File.ReadLines)
            .Where(line => line.Contains(Benchmark, StringComparison.Ordinal))
            .Select(line => line[(line.IndexOf(Benchmark, StringComparison.Ordinal) + Benchmark.Length)..])];
        Assert.True(tiers.Length > 0, $"no perf map lists {Benchmark}: {result}");
        if (jit == "tiered")
        {
            Assert.True(tiers.All(tier => tier != "[Optimized]"), $"expected tiered code, got {string.Join(", ", tiers)}: {result}");
            Assert.Contains("jembench micro: JIT: tiered compilation with dynamic PGO", result.Output, StringComparison.Ordinal);
        }
        else
        {
            Assert.True(tiers.All(tier => tier == "[Optimized]"), $"expected fully optimized code, got {string.Join(", ", tiers)}: {result}");
            Assert.Contains("jembench micro: JIT: every method fully optimized at its first call", result.Output, StringComparison.Ordinal);
        }
    }
}
