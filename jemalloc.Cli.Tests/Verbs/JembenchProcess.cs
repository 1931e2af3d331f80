using System.Diagnostics;

namespace jemalloc.Cli.Tests.Verbs;

/// <summary>Runs jembench as a real process (<c>dotnet exec jembench.dll</c>), as a user runs it, and collects what it prints.</summary>
internal static class JembenchProcess
{
    /// <summary>The result of a finished jembench process.</summary>
    internal sealed record Result(int ExitCode, string Output, string Error)
    {
        public override string ToString() => $"exit {ExitCode}{Environment.NewLine}stdout:{Environment.NewLine}{Output}{Environment.NewLine}stderr:{Environment.NewLine}{Error}";
    }

    /// <summary>
    /// Runs jembench with <paramref name="arguments"/>; <paramref name="environment"/> sets (or, with a
    /// null value, removes) variables; jemalloc.NET's own variables are removed unless given.
    /// </summary>
    internal static Result Run(IReadOnlyDictionary<string, string?> environment, TimeSpan timeout, params string[] arguments)
    {
        string jembench = Path.Combine(AppContext.BaseDirectory, "jembench.dll");
        Assert.True(File.Exists(jembench), $"jembench was not built next to the tests ({jembench}).");
        var start = new ProcessStartInfo(DotnetHost)
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
            WorkingDirectory = AppContext.BaseDirectory,
        };
        foreach (string argument in (string[])["exec", jembench, .. arguments])
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
            Assert.Fail($"jembench {string.Join(' ', arguments)} did not finish within {timeout}.{Environment.NewLine}{output.Result}{error.Result}");
        }

        process.WaitForExit();
        return new Result(process.ExitCode, output.Result, error.Result);
    }

    private static string DotnetHost
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
}
