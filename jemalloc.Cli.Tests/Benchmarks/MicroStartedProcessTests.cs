using System.Diagnostics;
using jemalloc.Benchmarks.Infrastructure;
using jemalloc.Tests;
using jemalloc.Cli.Tests.Verbs;
using jemalloc.Tests.Support;

namespace jemalloc.Cli.Tests.Benchmarks;

/// <summary>
/// The jembench process <c>micro</c> starts for its JIT mode does not outlive the jembench that
/// started it: left alone, it would go on measuring, unseen (its output goes nowhere), next to
/// whatever runs after.
/// </summary>
[Collection(JembenchRuns.Name)]
public sealed class MicroStartedProcessTests : IDisposable
{
    private static readonly TimeSpan Timeout = TimeSpan.FromMinutes(2);

    private readonly string _artifacts = Path.Combine(Path.GetTempPath(), "jembench-signal-" + Guid.NewGuid().ToString("N"));

    public void Dispose()
    {
        if (Directory.Exists(_artifacts))
        {
            Directory.Delete(_artifacts, recursive: true);
        }
    }

    [LinuxOnlyFact("/proc and the kill command")]
    public void Micro_ended_by_a_signal_ends_the_process_it_started()
    {
        string jembench = Path.Combine(AppContext.BaseDirectory, "jembench.dll");
        var start = new ProcessStartInfo(ChildProcessRunner.DotnetHost)
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
            WorkingDirectory = AppContext.BaseDirectory,
        };
        // A full run (not --quick) of every allocation row: minutes, far longer than the waits below.
        foreach (string argument in (string[])["exec", jembench, "micro", "-e", "none", "--artifacts", _artifacts, "*AllocationBenchmarks*"])
        {
            start.ArgumentList.Add(argument);
        }

        foreach (string name in (string[])["DOTNET_TieredCompilation", "COMPlus_TieredCompilation", BrokenResultSwitch.Variable, Jem.ConfigurationVariable])
        {
            start.Environment.Remove(name);
        }

        using Process parent = Process.Start(start)!;
        Process? started = null;
        try
        {
            Task<string> errors = parent.StandardError.ReadToEndAsync();
            // The header comes from the process jembench started for tiered compilation: once it is read, that process runs.
            Task<bool> header = Task.Run(() =>
            {
                while (parent.StandardOutput.ReadLine() is string line)
                {
                    if (line.StartsWith("jembench micro: JIT: tiered compilation", StringComparison.Ordinal))
                    {
                        return true;
                    }
                }

                return false;
            });
            Assert.True(header.Wait(Timeout) && header.Result, $"jembench printed no header within {Timeout}: exited {parent.HasExited}");
            Task drained = parent.StandardOutput.ReadToEndAsync();

            int[] children = ChildrenOf(parent.Id);
            Assert.True(children.Length == 1, $"expected one process started by jembench, found {children.Length}");
            started = Process.GetProcessById(children[0]);

            using (Process kill = Process.Start("kill", ["-TERM", parent.Id.ToString(System.Globalization.CultureInfo.InvariantCulture)]))
            {
                Assert.True(kill.WaitForExit(Timeout), "kill did not finish");
            }

            Assert.True(parent.WaitForExit(Timeout), "jembench did not end on SIGTERM");
            Assert.True(started.WaitForExit(TimeSpan.FromSeconds(30)), "the process jembench started for --jit tiered outlived it");
            drained.Wait(Timeout);
            errors.Wait(Timeout);
        }
        finally
        {
            if (!parent.HasExited)
            {
                parent.Kill(entireProcessTree: true);
            }

            if (started is { HasExited: false })
            {
                started.Kill(entireProcessTree: true);
            }

            started?.Dispose();
        }
    }

    private static int[] ChildrenOf(int pid) =>
        [.. Directory.GetDirectories($"/proc/{pid}/task")
            .Select(task => Path.Combine(task, "children"))
            .Where(File.Exists)
            .SelectMany(file => File.ReadAllText(file).Split(' ', StringSplitOptions.RemoveEmptyEntries))
            .Select(int.Parse)];
}
