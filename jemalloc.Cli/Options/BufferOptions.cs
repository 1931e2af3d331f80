using CommandLine;

namespace jemalloc.Cli.Options;

/// <summary><c>jembench buffer</c>: <c>FixedBuffer&lt;T&gt;</c> against managed arrays.</summary>
[Verb("buffer", HelpText = "FixedBuffer<T> against managed arrays: --fill (fill, and create-and-fill), --create (create-and-fill only), --math. Sizes: element counts.")]
public sealed class BufferOptions : StructureOptions
{
}
