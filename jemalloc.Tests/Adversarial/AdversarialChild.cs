namespace jemalloc.Tests.Adversarial;

/// <summary>
/// Runs one adversarial scenario of jemalloc.Tests.ChildProcess (its <c>Adversarial/</c> folder) in
/// a separate process, so that a crash, a hang or an OOM kill fails that test instead of the run. A test
/// names its scenario by the scenario's constant (<see cref="jemalloc.Tests.ChildProcess.Adversarial.RecordTornCopyScenarios.RecordsTornStringWords"/>),
/// never by a string of its own; <see cref="ScenarioRegistryTests"/> checks that the two sides match.
/// </summary>
internal static class AdversarialChild
{
    /// <summary>
    /// Long enough for the slowest scenario (about 3 s of races plus start-up) on a busy 2-core machine;
    /// self-contained, as under an emulator (./build.sh test-linux-arm64, test-win-x64), five minutes.
    /// </summary>
    internal static readonly TimeSpan Timeout = ChildProcessRunner.IsSelfContained ? TimeSpan.FromMinutes(5) : TimeSpan.FromSeconds(60);

    /// <summary>Runs <paramref name="scenario"/>; fails on a timeout (the child is killed), <see cref="Timeout"/> unless <paramref name="timeout"/> says more.</summary>
    internal static ChildProcessRunner.Result Run(string scenario, bool checkedMode = false, TimeSpan? timeout = null)
    {
        var environment = new Dictionary<string, string?>
        {
            ["JEMALLOC_NET_CHECKED"] = checkedMode ? "1" : null,
            ["JEMALLOC_NET_QUARANTINE_BYTES"] = null,
        };
        // The helper: through the dotnet host, or published beside the tests (and its emulator, if any).
        return ChildProcessRunner.RunHelper(timeout ?? Timeout, environment, "adversarial", scenario);
    }

    /// <summary>
    /// Runs <paramref name="scenario"/> and asserts it ran to its end (exit code 0 and <c>DONE</c>:
    /// no crash, no kill) with no <c>FAIL</c> line. Returns the child's output.
    /// </summary>
    internal static string AssertClean(string scenario, bool checkedMode = false, TimeSpan? timeout = null)
    {
        ChildProcessRunner.Result result = Run(scenario, checkedMode, timeout);
        string[] failures = Lines(result.Output).Where(line => line.StartsWith("FAIL ", StringComparison.Ordinal)).ToArray();
        Assert.True(
            result.ExitCode == 0 && Lines(result.Output).Contains("DONE") && failures.Length == 0,
            $"Adversarial scenario '{scenario}' {Describe(result, failures)}{Environment.NewLine}{result}");
        return result.Output;
    }

    /// <summary>The names of every scenario the child knows (its <c>adversarial list</c>).</summary>
    internal static string[] List()
    {
        ChildProcessRunner.Result result = Run("list");
        Assert.True(result.ExitCode == 0, $"The child could not list its scenarios.{Environment.NewLine}{result}");
        return Lines(result.Output).Where(line => line.Length > 0).ToArray();
    }

    internal static IEnumerable<string> Lines(string output) =>
        output.Split('\n').Select(line => line.TrimEnd('\r'));

    private static string Describe(ChildProcessRunner.Result result, string[] failures) =>
        result.ExitCode != 0 ? $"crashed or was killed (exit code {result.ExitCode})"
        : !Lines(result.Output).Contains("DONE") ? "did not run to its end"
        : $"found {failures.Length} failure(s):{Environment.NewLine}{string.Join(Environment.NewLine, failures.Take(20))}";
}

/// <summary>The adversarial tests run one child at a time: they race threads of their own, on a machine that may have 2 cores.</summary>
[CollectionDefinition(Name)]
public sealed class AdversarialScenarios
{
    public const string Name = "adversarial scenarios";
}
