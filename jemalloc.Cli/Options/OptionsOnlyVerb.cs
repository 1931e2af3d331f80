using System.Reflection;
using CommandLine;

namespace jemalloc.Cli.Options;

/// <summary>
/// A verb that takes named options only. The parser would drop a value no option takes without a word,
/// e.g. the second side of <c>--side class native</c>; such a verb collects them here and refuses them.
/// </summary>
public abstract class OptionsOnlyVerb
{
    /// <summary>The values no option took; refused by <see cref="RejectStrayValues"/>.</summary>
    [Value(0, MetaName = "unexpected", Hidden = true)]
    public IEnumerable<string> StrayValues { get; set; } = [];

    /// <summary>Refuses the command line if it has a value no option took.</summary>
    /// <exception cref="CommandLineException">There is such a value.</exception>
    public void RejectStrayValues()
    {
        string? stray = StrayValues.FirstOrDefault();
        if (stray is not null)
        {
            string verb = GetType().GetCustomAttribute<VerbAttribute>()?.Name ?? GetType().Name;
            throw new CommandLineException($"{verb}: '{stray}' is not an option, and {verb} takes no positional values (a list option takes one comma-separated value, e.g. --side a,b).");
        }
    }
}
