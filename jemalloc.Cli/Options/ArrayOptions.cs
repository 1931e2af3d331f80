using CommandLine;

namespace jemalloc.Cli.Options;

/// <summary><c>jembench array</c> (alias <c>safe</c>): <c>SafeArray&lt;T&gt;</c> against managed arrays.</summary>
[Verb("array", aliases: ["safe"], HelpText = "SafeArray<T> against managed arrays: --fill (fill, and create-and-fill), --create (create-and-fill only), --math. Sizes: element counts.")]
public sealed class ArrayOptions : StructureOptions
{
    /// <inheritdoc/>
    protected override bool AllowsUdt => true;
}
