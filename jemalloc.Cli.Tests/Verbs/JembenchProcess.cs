using jemalloc.Tests;

namespace jemalloc.Cli.Tests.Verbs;

/// <summary>Runs jembench as a real process (<c>dotnet exec jembench.dll</c>), as a user runs it, and collects what it prints.</summary>
internal static class JembenchProcess
{
    /// <summary>
    /// Runs jembench with <paramref name="arguments"/>; <paramref name="environment"/> sets (or, with a
    /// null value, removes) variables; jemalloc.NET's own variables are removed unless given.
    /// </summary>
    internal static ChildProcessRunner.Result Run(IReadOnlyDictionary<string, string?> environment, TimeSpan timeout, params string[] arguments)
    {
        string jembench = Path.Combine(AppContext.BaseDirectory, "jembench.dll");
        Assert.True(File.Exists(jembench), $"jembench was not built next to the tests ({jembench}).");
        return ChildProcessRunner.Run(ChildProcessRunner.DotnetHost, ["exec", jembench, .. arguments], environment, AppContext.BaseDirectory, timeout);
    }
}
