using System.Diagnostics;
using System.Reflection;
using System.Text.Json;

namespace jemalloc.Cli.Commands;

/// <summary>
/// Runs one side of a timed harness in a jembench process of its own, so that its peak RSS, GC
/// counts and managed allocations are its own: the child prints its result as one JSON line after a
/// prefix, and the parent reads it back. Used by every verb that compares sides process by process.
/// </summary>
public static class SideProcess
{
    /// <summary>
    /// The command that starts another jembench: this executable, or the dotnet host with
    /// <c>exec jembench.dll</c> when jembench runs as <c>dotnet jembench.dll</c>; null when this process is
    /// not jembench (e.g. a test host), so the sides must run in this process.
    /// </summary>
    public static IReadOnlyList<string>? JembenchCommand()
    {
        string? path = Environment.ProcessPath;
        if (path is null)
        {
            return null;
        }

        if (Path.GetFileNameWithoutExtension(path) == "jembench")
        {
            return [path];
        }

        Assembly? entry = Assembly.GetEntryAssembly();
        return Path.GetFileNameWithoutExtension(path) == "dotnet" && entry?.GetName().Name == "jembench" && File.Exists(entry.Location)
            ? [path, "exec", entry.Location]
            : null;
    }

    /// <summary>Prints a child's result: <paramref name="prefix"/> and the result as one JSON line.</summary>
    public static void WriteResult<T>(TextWriter output, string prefix, T result)
    {
        ArgumentNullException.ThrowIfNull(output);
        output.WriteLine(prefix + JsonSerializer.Serialize(result));
    }

    /// <summary>
    /// Runs jembench with <paramref name="arguments"/> through <paramref name="command"/> and reads back the
    /// result the child printed after <paramref name="prefix"/>.
    /// </summary>
    /// <returns>The result, or null when the child failed (its exit code and output are written to <paramref name="error"/>).</returns>
    /// <exception cref="InvalidOperationException">The process could not be started.</exception>
    public static T? Run<T>(IReadOnlyList<string> command, IEnumerable<string> arguments, string prefix, string what, TextWriter error)
        where T : class
    {
        ArgumentNullException.ThrowIfNull(command);
        ArgumentNullException.ThrowIfNull(arguments);
        ArgumentNullException.ThrowIfNull(error);
        var start = new ProcessStartInfo(command[0])
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        foreach (string argument in command.Skip(1).Concat(arguments))
        {
            start.ArgumentList.Add(argument);
        }

        using Process child = Process.Start(start) ?? throw new InvalidOperationException($"{what}: could not start {command[0]}.");
        Task<string> stderr = child.StandardError.ReadToEndAsync();
        string stdout = child.StandardOutput.ReadToEnd();
        child.WaitForExit();
        string childError = stderr.GetAwaiter().GetResult();
        string? line = stdout.Split('\n').Select(l => l.Trim()).LastOrDefault(l => l.StartsWith(prefix, StringComparison.Ordinal));
        if (child.ExitCode != Program.ExitSuccess || line is null)
        {
            error.WriteLine($"{what} process exited with {child.ExitCode}: {childError.Trim()} {stdout.Trim()}");
            return null;
        }

        return JsonSerializer.Deserialize<T>(line[prefix.Length..]);
    }
}
