using System.Text.RegularExpressions;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.Docs;

/// <summary>
/// docs/building.md describes build.sh as it is: every command build.sh accepts is in its own help
/// (the comment at its top, which <c>./build.sh help</c> prints) and named on the page, and every
/// environment variable that help lists has its row in the page's table.
/// </summary>
public sealed partial class BuildScriptDocsTests
{
    private static readonly string s_root = RepositoryPaths.Root;

    // The commands build.sh names when it is given an unknown one: "(try: build, native, ...)".
    [GeneratedRegex(@"\(try: (?<commands>[a-z0-9, -]+)\)")]
    private static partial Regex AcceptedCommands();

    // "#   ./build.sh test-win-x64 [ARGS]  ..." (one space: the bare "./build.sh" line is build).
    [GeneratedRegex(@"^#   \./build\.sh (?<command>[a-z][a-z0-9-]*)", RegexOptions.Multiline)]
    private static partial Regex HelpCommand();

    // "#   JEMALLOC_NET_WINEPREFIX=path  ..." in the help's Environment part.
    [GeneratedRegex(@"^#   (?<name>[A-Z][A-Z0-9_]*)=", RegexOptions.Multiline)]
    private static partial Regex HelpVariable();

    [Fact]
    public void Every_command_build_sh_accepts_is_in_its_help_and_in_building_md()
    {
        string script = File.ReadAllText(Path.Combine(s_root, "build.sh"));
        string help = Help(script);
        string page = File.ReadAllText(Path.Combine(s_root, "docs", "building.md"));
        Match accepted = AcceptedCommands().Match(script);
        Assert.True(accepted.Success, "build.sh no longer lists its commands as \"(try: ...)\"");
        string[] commands = accepted.Groups["commands"].Value.Split(", ");
        Assert.Contains("test-benchmark", commands);

        string[] inHelp = [.. HelpCommand().Matches(help).Select(m => m.Groups["command"].Value)];
        string[] missingFromHelp = [.. commands.Where(c => c is not "build" and not "help" && !inHelp.Contains(c))];
        Assert.True(missingFromHelp.Length == 0, "build.sh's help does not describe: " + string.Join(", ", missingFromHelp));

        string[] missingFromPage = [.. commands.Where(c => c is not "build" && !Regex.IsMatch(page, @"(\./build\.sh |`)" + Regex.Escape(c) + @"(?![\w-])"))];
        Assert.True(missingFromPage.Length == 0, "docs/building.md does not name: " + string.Join(", ", missingFromPage));
    }

    [Fact]
    public void Every_environment_variable_in_build_sh_help_has_its_row_in_building_md()
    {
        string help = Help(File.ReadAllText(Path.Combine(s_root, "build.sh")));
        string page = File.ReadAllText(Path.Combine(s_root, "docs", "building.md"));
        int environment = help.IndexOf("# Environment:", StringComparison.Ordinal);
        Assert.True(environment >= 0, "build.sh's help has no Environment part");

        string[] variables = [.. HelpVariable().Matches(help[environment..]).Select(m => m.Groups["name"].Value)];
        Assert.Contains("JEMALLOC_NET_WINEPREFIX", variables);
        string[] missing = [.. variables.Where(v => !page.Contains($"| `{v}=", StringComparison.Ordinal))];
        Assert.True(missing.Length == 0, "docs/building.md's table of environment variables has no row for: " + string.Join(", ", missing));
    }

    /// <summary>The comment lines at the top of build.sh, after the #! line: what <c>./build.sh help</c> prints.</summary>
    private static string Help(string script) =>
        string.Join('\n', script.Split('\n').Skip(1).TakeWhile(line => line.StartsWith('#')));
}
