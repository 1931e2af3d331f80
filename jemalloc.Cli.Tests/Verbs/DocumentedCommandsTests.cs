using System.Text.RegularExpressions;
using CommandLine;
using jemalloc.Tests.Support;

namespace jemalloc.Cli.Tests.Verbs;

/// <summary>
/// Every <c>jembench</c> command the README and the docs print (inline, or on a line of a code block),
/// the results pages' included, parses with the options jembench has today: a renamed or removed
/// option, or a misspelt verb, fails here instead of in a reader's terminal. Commands with a placeholder
/// (<c>&lt;side&gt;</c>, <c>...</c>) are not whole commands and are passed over.
/// </summary>
public sealed partial class DocumentedCommandsTests
{
    [Fact]
    public void Every_jembench_command_in_the_readme_and_docs_parses()
    {
        List<(string Where, string Command)> commands = DocumentedCommands();
        Assert.True(commands.Count >= 20, $"only {commands.Count} jembench commands found under {RepositoryPaths.Root}");

        var failures = new List<string>();
        foreach ((string where, string command) in commands)
        {
            string[] args = command.Split(' ', StringSplitOptions.RemoveEmptyEntries)[1..];
            if (Program.Parse(args) is NotParsed<object> notParsed
                && !notParsed.Errors.All(e => e is HelpRequestedError or HelpVerbRequestedError or VersionRequestedError))
            {
                failures.Add($"{where}: `{command}`: {string.Join("; ", notParsed.Errors.Select(Describe))}");
            }
        }

        Assert.True(failures.Count == 0, "Documented commands jembench does not take:\n" + string.Join('\n', failures));
    }

    [Fact]
    public void A_command_with_a_misspelt_option_is_found_and_refused()
    {
        // The extraction and the check above, on a command that must fail: the test cannot pass by finding nothing.
        List<string> found = CommandsIn("Run `jembench records --recods 10` (`jembench` alone is its name) or\n```sh\njembench cache --side native\n```\n");
        Assert.Equal(["jembench records --recods 10", "jembench cache --side native"], found);
        Assert.IsType<NotParsed<object>>(Program.Parse(found[0].Split(' ')[1..]));
        Assert.IsType<Parsed<object>>(Program.Parse(found[1].Split(' ')[1..]));
    }

    private static List<(string Where, string Command)> DocumentedCommands()
    {
        string root = RepositoryPaths.Root;
        IEnumerable<string> pages = Directory.EnumerateFiles(Path.Combine(root, "docs"), "*.md", SearchOption.AllDirectories).Prepend(Path.Combine(root, "README.md"));
        return [.. pages.SelectMany(page => CommandsIn(File.ReadAllText(page)).Select(command => (Path.GetRelativePath(root, page), command)))];
    }

    // `jembench ...` in inline code, and lines of code blocks that start with jembench (a shell prompt
    // or the built program's path before it allowed), without the ones with placeholders.
    private static List<string> CommandsIn(string markdown)
    {
        var commands = new List<string>();
        bool inBlock = false;
        foreach (string rawLine in markdown.Split('\n'))
        {
            string line = rawLine.TrimEnd('\r');
            if (line.TrimStart().StartsWith("```", StringComparison.Ordinal))
            {
                inBlock = !inBlock;
                continue;
            }

            if (inBlock)
            {
                Match match = BlockCommand().Match(line);
                if (match.Success)
                {
                    commands.Add("jembench " + match.Groups["args"].Value.Trim());
                }
            }
            else
            {
                commands.AddRange(InlineCommand().Matches(line).Select(m => m.Groups["command"].Value.Trim()));
            }
        }

        // The program's bare name is prose ("jembench prints ..."), not a command.
        return [.. commands.Where(c => c != "jembench" && !c.Contains('<', StringComparison.Ordinal) && !c.Contains("...", StringComparison.Ordinal) && !c.Contains('…', StringComparison.Ordinal))
            .Select(c => string.Join(' ', c.Split(' ', StringSplitOptions.RemoveEmptyEntries)))];
    }

    private static string Describe(Error error) => error switch
    {
        UnknownOptionError unknown => $"unknown option '{unknown.Token}'",
        BadVerbSelectedError verb => $"unknown verb '{verb.Token}'",
        BadFormatConversionError format => $"'{format.NameInfo.NameText}' has a value of the wrong form",
        MissingValueOptionError missing => $"'{missing.NameInfo.NameText}' needs a value",
        _ => error.Tag.ToString(),
    };

    [GeneratedRegex(@"`(?<command>jembench(?: [^`]*)?)`")]
    private static partial Regex InlineCommand();

    [GeneratedRegex(@"^\s*(?:\$ )?(?:\S*/)?jembench(?<args>(?: .*)?)$")]
    private static partial Regex BlockCommand();
}
