using System.Diagnostics;

namespace jemalloc.Tests;

/// <summary>Runs a program in a separate process and collects its output (for things that happen before jemalloc loads).</summary>
internal static class ChildProcessRunner
{
    /// <summary>The result of a finished child process.</summary>
    internal sealed record Result(int ExitCode, string Output, string Error)
    {
        public override string ToString() => $"exit {ExitCode}{Environment.NewLine}stdout:{Environment.NewLine}{Output}{Environment.NewLine}stderr:{Environment.NewLine}{Error}";
    }

    /// <summary>The dotnet host running this test process.</summary>
    internal static string DotnetHost
    {
        get
        {
            string? host = Environment.GetEnvironmentVariable("DOTNET_HOST_PATH");
            if (!string.IsNullOrEmpty(host) && File.Exists(host))
            {
                return host;
            }

            string? current = Environment.ProcessPath;
            return current is not null && Path.GetFileNameWithoutExtension(current) == "dotnet" ? current : "dotnet";
        }
    }

    /// <summary>Whether the tests run self-contained (published for a runtime identifier), without a dotnet host or SDK.</summary>
    /// <remarks>A self-contained app carries the runtime: the core library is in the application's own folder.</remarks>
    internal static bool IsSelfContained =>
        string.Equals(Path.TrimEndingDirectorySeparator(Path.GetDirectoryName(typeof(object).Assembly.Location) ?? ""),
            Path.TrimEndingDirectorySeparator(AppContext.BaseDirectory), StringComparison.OrdinalIgnoreCase);

    /// <summary>Runs the test helper program (jemalloc.Tests.ChildProcess) with <paramref name="arguments"/>.</summary>
    internal static Result RunHelper(IReadOnlyDictionary<string, string?> environment, params string[] arguments) =>
        RunHelper(null, environment, arguments);

    /// <summary>
    /// Runs the test helper program (jemalloc.Tests.ChildProcess) with <paramref name="arguments"/>,
    /// killing it after <paramref name="timeout"/> (null: 2 minutes with a dotnet host, 5 minutes
    /// self-contained, where it may run under an emulator).
    /// </summary>
    internal static Result RunHelper(TimeSpan? timeout, IReadOnlyDictionary<string, string?> environment, params string[] arguments)
    {
        string helper = Path.Combine(AppContext.BaseDirectory, "jemalloc.Tests.ChildProcess.dll");
        Assert.True(File.Exists(helper), $"The test helper {helper} was not built next to the tests.");
        if (IsSelfContained)
        {
            // Published self-contained (./build.sh test-linux-arm64, test-win-x64): there is no dotnet host;
            // the helper is published beside the tests with its own executable, started through the
            // emulator the tests run under, if any (JEMALLOC_NET_TEST_LAUNCHER, e.g. qemu-aarch64-static).
            string executable = Path.Combine(AppContext.BaseDirectory, OperatingSystem.IsWindows() ? "jemalloc.Tests.ChildProcess.exe" : "jemalloc.Tests.ChildProcess");
            Assert.True(File.Exists(executable), $"The test helper's executable {executable} was not published beside the tests.");
            string? launcher = Environment.GetEnvironmentVariable("JEMALLOC_NET_TEST_LAUNCHER");
            return string.IsNullOrEmpty(launcher)
                ? Run(executable, arguments, environment, AppContext.BaseDirectory, timeout ?? TimeSpan.FromMinutes(5))
                : Run(launcher, [executable, .. arguments], environment, AppContext.BaseDirectory, timeout ?? TimeSpan.FromMinutes(5));
        }

        return Run(DotnetHost, ["exec", helper, .. arguments], environment, AppContext.BaseDirectory, timeout ?? TimeSpan.FromMinutes(2));
    }

    /// <summary>Runs <paramref name="fileName"/>; jemalloc.NET's own environment variables are removed unless given.</summary>
    internal static Result Run(string fileName, IEnumerable<string> arguments, IReadOnlyDictionary<string, string?> environment, string workingDirectory, TimeSpan timeout)
    {
        var start = new ProcessStartInfo(fileName)
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
            WorkingDirectory = workingDirectory,
        };
        foreach (string argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }

        start.Environment.Remove("JEMALLOC_NET_LIBRARY");
        start.Environment.Remove(Jem.ConfigurationVariable);
        foreach ((string name, string? value) in environment)
        {
            if (value is null)
            {
                start.Environment.Remove(name);
            }
            else
            {
                start.Environment[name] = value;
            }
        }

        using var process = Process.Start(start)!;
        Task<string> output = process.StandardOutput.ReadToEndAsync();
        Task<string> error = process.StandardError.ReadToEndAsync();
        if (!process.WaitForExit(timeout))
        {
            process.Kill(entireProcessTree: true);
            process.WaitForExit();
            Assert.Fail($"{fileName} {string.Join(' ', arguments)} did not finish within {timeout}.{Environment.NewLine}{output.Result}{error.Result}");
        }

        process.WaitForExit();
        return new Result(process.ExitCode, output.Result, error.Result);
    }
}
