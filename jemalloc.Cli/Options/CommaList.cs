namespace jemalloc.Cli.Options;

/// <summary>
/// The entries of a list option. jembench's list options take one comma-separated value (<c>--side a,b</c>)
/// rather than a sequence, which would take every value after the option as another entry.
/// </summary>
public static class CommaList
{
    /// <summary>The trimmed, non-empty entries of <paramref name="value"/>, in order; empty when it is null.</summary>
    public static string[] Split(string? value) =>
        value is null ? [] : value.Split(',', StringSplitOptions.TrimEntries | StringSplitOptions.RemoveEmptyEntries);
}
