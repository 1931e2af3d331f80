using CommandLine;

namespace jemalloc.Cli.Options;

/// <summary><c>jembench arena</c>: many small allocations thrown away by one arena reset, against freeing each one and the managed heap.</summary>
[Verb("arena", HelpText = "A working set of N small allocations (16..1024 bytes) thrown away at once: JemArena reset against freeing each one (JemArena, jemalloc, C malloc, FixedBuffer) and managed arrays. Sizes: allocations per operation.")]
public sealed class ArenaOptions : RunOptions
{
    /// <summary>The sizes.</summary>
    [Value(0, MetaName = "counts", HelpText = "Allocations per operation (default 100000).")]
    public IEnumerable<long> Sizes { get; set; } = [];
}
