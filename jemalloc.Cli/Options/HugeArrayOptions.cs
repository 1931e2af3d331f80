using CommandLine;

namespace jemalloc.Cli.Options;

/// <summary><c>jembench hugearray</c> (alias <c>huge</c>): <c>HugeArray&lt;T&gt;</c> against the largest managed array.</summary>
[Verb("hugearray", aliases: ["huge"], HelpText = "HugeArray<T> (64-bit lengths) against the largest managed array .NET allows: --create, --fill, --math. Sizes: element counts. Unless -t or --once is given, 5 cold-start iterations.")]
public sealed class HugeArrayOptions : StructureOptions
{
    /// <inheritdoc/>
    protected override bool AllowsUdt => true;
}
