namespace jemalloc.Cli.Commands;

/// <summary>What out-of-process benchmark jobs need: BenchmarkDotNet builds them from the sources.</summary>
public static class OutOfProcess
{
    /// <summary>
    /// BenchmarkDotNet generates a project for each out-of-process job and finds the benchmarks'
    /// project by searching the current directory's source tree. When jembench runs from elsewhere,
    /// switch to the source tree it was built from (found upwards from the executable).
    /// </summary>
    /// <exception cref="CommandLineException">No source tree can be found: run with --in-process instead.</exception>
    public static void EnterSourceTree(TextWriter output)
    {
        ArgumentNullException.ThrowIfNull(output);
        if (FindSolutionFolder(Directory.GetCurrentDirectory()) is not null)
        {
            return;
        }

        string? tree = FindSolutionFolder(AppContext.BaseDirectory);
        if (tree is null)
        {
            throw new CommandLineException(
                "this suite runs each jemalloc configuration in its own process, which BenchmarkDotNet builds from the jemalloc.NET sources, " +
                "and no source tree was found. Run it from the source tree, or add --in-process to use this process's configuration only.");
        }

        output.WriteLine($"jembench: working in the source tree {tree} (needed to build the benchmark processes).");
        Directory.SetCurrentDirectory(tree);
    }

    private static string? FindSolutionFolder(string start)
    {
        for (var folder = new DirectoryInfo(start); folder is not null; folder = folder.Parent)
        {
            if (File.Exists(Path.Combine(folder.FullName, "jemalloc.NET.sln")))
            {
                return folder.FullName;
            }
        }

        return null;
    }
}
