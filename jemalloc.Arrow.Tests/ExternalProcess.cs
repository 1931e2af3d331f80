using System.Diagnostics;

namespace jemalloc.Arrow.Tests;

/// <summary>Runs the programs the tests check against (node, gcc) with a time limit.</summary>
internal static class ExternalProcess
{
    /// <summary>Runs <paramref name="program"/> to its end and returns its exit code and output; fails the test (killing it) if it does not end within <paramref name="timeout"/>.</summary>
    internal static (int ExitCode, string Output, string Error) Run(string program, IEnumerable<string> arguments, TimeSpan timeout, IReadOnlyDictionary<string, string>? environment = null)
    {
        var start = new ProcessStartInfo(program)
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        foreach (string argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }

        foreach ((string name, string value) in environment ?? new Dictionary<string, string>())
        {
            start.Environment[name] = value;
        }

        using Process process = Process.Start(start) ?? throw new InvalidOperationException($"{program} did not start");
        Task<string> output = process.StandardOutput.ReadToEndAsync();
        Task<string> error = process.StandardError.ReadToEndAsync();
        if (!process.WaitForExit(timeout))
        {
            process.Kill(entireProcessTree: true);
            Assert.Fail($"{program} {string.Join(' ', arguments)} did not finish within {timeout.TotalSeconds} s");
        }

        process.WaitForExit();
        return (process.ExitCode, output.Result, error.Result);
    }
}
