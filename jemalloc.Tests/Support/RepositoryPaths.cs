namespace jemalloc.Tests.Support;

/// <summary>
/// Where the repository is, for the tests that read its sources and pages: the first folder above the
/// test's binaries that holds jemalloc.NET.sln. One source for jemalloc.Tests and jemalloc.Cli.Tests.
/// </summary>
internal static class RepositoryPaths
{
    private static readonly Lazy<string> s_root = new(Find);

    /// <summary>The repository's root folder.</summary>
    /// <exception cref="InvalidOperationException">No folder above the test's binaries holds jemalloc.NET.sln.</exception>
    internal static string Root => s_root.Value;

    private static string Find()
    {
        for (DirectoryInfo? directory = new(AppContext.BaseDirectory); directory is not null; directory = directory.Parent)
        {
            if (File.Exists(Path.Combine(directory.FullName, "jemalloc.NET.sln")))
            {
                return directory.FullName;
            }
        }

        throw new InvalidOperationException($"No jemalloc.NET.sln above {AppContext.BaseDirectory}.");
    }
}
