using System.ComponentModel;
using System.Diagnostics;
using System.Runtime.InteropServices;

namespace jemalloc.Cli.Commands;

/// <summary>
/// The JIT mode <c>jembench micro</c> measures in. jembench itself runs with tiered compilation off,
/// so that a cold-start iteration of the other suites measures optimized code on both sides. A
/// micro-benchmark measures small, hot paths in the steady state, where what a .NET application
/// runs by default (tiered compilation with dynamic PGO, which inlines along the hot paths it
/// observes) and fully optimized code without profile can differ by a factor of two. The mode is
/// fixed when a process starts, so a run in the other mode is handed to a jembench process started
/// with <c>DOTNET_TieredCompilation</c> set.
/// </summary>
public static class MicroJit
{
    /// <summary>The value of <c>--jit</c> for tiered compilation with dynamic PGO (the default).</summary>
    public const string Tiered = "tiered";

    /// <summary>The value of <c>--jit</c> for every method fully optimized at its first call, without profile.</summary>
    public const string Full = "full";

    private const string TieredCompilationVariable = "DOTNET_TieredCompilation";

    // The runtime's older name, read when the DOTNET_ one is not set.
    private const string LegacyTieredCompilationVariable = "COMPlus_TieredCompilation";

    // Set in the process started for the other mode, so that it never starts another one.
    private const string StartedForModeVariable = "JEMBENCH_MICRO_STARTED_FOR_JIT";

    // The signals that end a process by default, which end the process started for a mode too.
    private static readonly PosixSignal[] StoppingSignals = [PosixSignal.SIGINT, PosixSignal.SIGTERM, PosixSignal.SIGQUIT, PosixSignal.SIGHUP];

    /// <summary>Whether <paramref name="value"/> (of <c>--jit</c>; null for the default) asks for tiered compilation.</summary>
    /// <exception cref="CommandLineException">It is neither <see cref="Tiered"/> nor <see cref="Full"/>.</exception>
    public static bool AsksForTiered(string? value) => value switch
    {
        null or Tiered => true,
        Full => false,
        _ => throw new CommandLineException($"micro: --jit must be '{Tiered}' or '{Full}', not '{value}'."),
    };

    /// <summary>
    /// Whether this process runs tiered compilation, when its environment settles it beyond doubt:
    /// <c>DOTNET_TieredCompilation</c> (or, unset, <c>COMPlus_TieredCompilation</c>) is exactly <c>1</c>
    /// or <c>0</c>, or neither is set and the runtime configuration decides (on unless turned off).
    /// Null for any other value: the runtime reads these as hexadecimal numbers and falls back to the
    /// runtime configuration on what it cannot parse (<c>00</c> and <c>0x0</c> turn tiering off,
    /// <c>true</c> leaves jembench's own setting), rules not worth copying when a process started with
    /// an exact value settles the question.
    /// </summary>
    public static bool? ThisProcessRunsTiered()
    {
        string? variable = Environment.GetEnvironmentVariable(TieredCompilationVariable) ?? Environment.GetEnvironmentVariable(LegacyTieredCompilationVariable);
        return variable switch
        {
            null => !AppContext.TryGetSwitch("System.Runtime.TieredCompilation", out bool enabled) || enabled,
            "1" => true,
            "0" => false,
            _ => null,
        };
    }

    /// <summary>What the run's header says about the JIT mode it measures in.</summary>
    public static string Describe(bool tiered) => tiered
        ? "jembench micro: JIT: tiered compilation with dynamic PGO, what a .NET application runs by default (--jit full: fully optimized at first call)."
        : "jembench micro: JIT: every method fully optimized at its first call, without profile (--jit full).";

    /// <summary>
    /// Runs this jembench command line again in a jembench process started in the given JIT mode,
    /// copying its output to <paramref name="output"/> (its errors go to this process's standard
    /// error), and returns its exit code.
    /// </summary>
    /// <exception cref="CommandLineException">This process is not jembench (e.g. a test host), so no jembench process can be started.</exception>
    /// <exception cref="InvalidOperationException">This process was itself started for a JIT mode, and does not run in it for certain.</exception>
    public static int RunInProcessOfMode(bool tiered, TextWriter output)
    {
        ArgumentNullException.ThrowIfNull(output);
        if (Environment.GetEnvironmentVariable(StartedForModeVariable) is string asked)
        {
            throw new InvalidOperationException($"micro: this process was started for --jit {asked}, and does not run in that mode for certain.");
        }

        IReadOnlyList<string> command = SideProcess.JembenchCommand()
            ?? throw new CommandLineException(
                $"micro: this process does not run {(tiered ? "tiered compilation" : "fully optimized code")} for certain, and a jembench process in the other mode cannot be started from it; " +
                $"run jembench itself, or set {TieredCompilationVariable}={(tiered ? 1 : 0)} for this process.");
        var start = new ProcessStartInfo(command[0]) { RedirectStandardOutput = true, UseShellExecute = false };
        foreach (string argument in command.Skip(1).Concat(Environment.GetCommandLineArgs().Skip(1)))
        {
            start.ArgumentList.Add(argument);
        }

        start.Environment[TieredCompilationVariable] = tiered ? "1" : "0";
        start.Environment.Remove(LegacyTieredCompilationVariable);
        start.Environment[StartedForModeVariable] = tiered ? Tiered : Full;
        using Process child = Process.Start(start) ?? throw new InvalidOperationException($"micro: could not start {command[0]}.");
        // A signal that ends this process (kill, Ctrl-C, a closed terminal) ends the run it started: left
        // alone, that would go on measuring, its output going nowhere, next to whatever runs after.
        PosixSignalRegistration[] stops = [.. StoppingSignals.Select(signal => PosixSignalRegistration.Create(signal, _ => Stop(child)))];
        try
        {
            while (child.StandardOutput.ReadLine() is string line)
            {
                output.WriteLine(line);
            }

            child.WaitForExit();
            return child.ExitCode;
        }
        finally
        {
            foreach (PosixSignalRegistration stop in stops)
            {
                stop.Dispose();
            }
        }
    }

    private static void Stop(Process child)
    {
        try
        {
            child.Kill(entireProcessTree: true);
        }
        catch (Exception e) when (e is InvalidOperationException or Win32Exception)
        {
            // It has ended already, or cannot be ended from here: this process ends either way.
        }
    }
}
