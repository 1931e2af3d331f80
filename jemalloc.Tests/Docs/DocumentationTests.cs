using jemalloc.Tests.Support;

namespace jemalloc.Tests.Docs;

/// <summary>
/// README.md, CHANGELOG.md and every page of docs/: each relative link and #anchor resolves, and each
/// C# example is the text of a test region (<see cref="DocExampleTests"/> and the example tests beside it).
/// The checker itself is tested on small pages that break each rule.
/// </summary>
public sealed class DocumentationTests
{
    private static readonly string s_root = RepositoryPaths.Root;

    [Fact]
    public void Every_relative_link_in_the_readme_and_docs_resolves()
    {
        List<string> pages = Pages();
        Assert.Contains(pages, p => p.EndsWith("README.md", StringComparison.Ordinal));
        Assert.True(pages.Count >= 10, $"only {pages.Count} pages found under {s_root}");

        var broken = new List<string>();
        foreach (string page in pages)
        {
            broken.AddRange(MarkdownCheck.BrokenLinks(page, File.ReadAllText(page), ReadIfExists, Directory.Exists));
        }

        Assert.True(broken.Count == 0, "Broken links:\n" + string.Join('\n', broken));
    }

    [Fact]
    public void Every_csharp_example_in_the_readme_and_docs_is_the_text_of_a_test()
    {
        var problems = new List<string>();
        Dictionary<string, string> regions = MarkdownCheck.ExampleRegions(TestSources(), problems);
        int examples = 0;
        foreach (string page in Pages())
        {
            string text = File.ReadAllText(page);
            examples += MarkdownCheck.Split(text).Blocks.Count(b => b.ExampleId is not null);
            problems.AddRange(MarkdownCheck.StaleExamples(page, text, regions));
        }

        Assert.True(problems.Count == 0, "Examples that no test holds as printed:\n" + string.Join('\n', problems));
        Assert.True(examples >= 10, $"only {examples} marked examples found");
    }

    [Fact]
    public void A_link_to_a_missing_file_or_heading_is_reported()
    {
        string page = Path.Combine(s_root, "docs", "page.md");
        string other = Path.Combine(s_root, "docs", "other.md");
        const string Markdown = "# Page\n\n## Two words\n\n[ok](#two-words) [ok](other.md#the-part) [ok](other.md)\n" +
                                "[bad](#no-such) [bad](other.md#nope) [bad](missing.md) ![bad](img/none.svg)\n" +
                                "`[not a link](nowhere.md)`\n\n```sh\n[in code](nowhere.md)\n```\n";
        string? Read(string path) => path == other ? "# Other\n\n### The part\n" : path == page ? Markdown : null;

        List<string> broken = MarkdownCheck.BrokenLinks(page, Markdown, Read, _ => false);

        Assert.Equal(4, broken.Count);
        Assert.Contains(broken, b => b.Contains("#no-such", StringComparison.Ordinal));
        Assert.Contains(broken, b => b.Contains("other.md#nope", StringComparison.Ordinal));
        Assert.Contains(broken, b => b.Contains("missing.md (no such file)", StringComparison.Ordinal));
        Assert.Contains(broken, b => b.Contains("img/none.svg", StringComparison.Ordinal));
        Assert.All(broken, b => Assert.Contains(":6:", b, StringComparison.Ordinal));
    }

    [Fact]
    public void Anchors_follow_the_headings_as_GitHub_makes_them()
    {
        HashSet<string> anchors = MarkdownCheck.Anchors(
            "# jemalloc.NET\n## `FixedBuffer<T>`: a native array\n## Results\n## Results\n### Big long-lived record sets: `jembench records`\n" +
            "## [Platforms](x.md)\n```\n# not a heading\n```\n");

        string[] expected = ["jemallocnet", "fixedbuffert-a-native-array", "results", "results-1", "big-long-lived-record-sets-jembench-records", "platforms"];
        Assert.True(anchors.SetEquals(expected), string.Join(", ", anchors));
    }

    [Fact]
    public void A_stale_unmarked_or_unknown_example_is_reported()
    {
        var problems = new List<string>();
        Dictionary<string, string> regions = MarkdownCheck.ExampleRegions(
            [("Test.cs", "class T\n{\n    void M()\n    {\n        #region example: one\n        var x = 1;\n        #endregion\n    }\n}\n")],
            problems);
        Assert.Empty(problems);
        Assert.Equal("var x = 1;", regions["one"]);

        const string Markdown = "<!-- example: one -->\n```csharp\nvar x = 1;\n```\n\n" +
                                "<!-- example: one -->\n```csharp\nvar x = 2;\n```\n\n" +
                                "```csharp\nvar y = 1;\n```\n\n" +
                                "<!-- example: two -->\n```csharp\nvar z = 1;\n```\n\n" +
                                "```sh\nnot C#\n```\n";

        List<string> stale = MarkdownCheck.StaleExamples("page.md", Markdown, regions);

        Assert.Equal(3, stale.Count);
        Assert.Contains("page.md:7: example 'one' differs from its test region: line 1 of the block reads \"var x = 2;\", the test has \"var x = 1;\"", stale);
        Assert.Contains(stale, s => s.StartsWith("page.md:11: a C# block without", StringComparison.Ordinal));
        Assert.Contains(stale, s => s.StartsWith("page.md:16: example 'two' has no", StringComparison.Ordinal));
    }

    private static string? ReadIfExists(string path) => File.Exists(path) ? File.ReadAllText(path) : null;

    private static List<string> Pages()
    {
        var pages = new List<string> { Path.Combine(s_root, "README.md"), Path.Combine(s_root, "CHANGELOG.md") };
        pages.AddRange(Directory.EnumerateFiles(Path.Combine(s_root, "docs"), "*.md", SearchOption.AllDirectories).Order(StringComparer.Ordinal));
        return pages;
    }

    private static IEnumerable<(string File, string Text)> TestSources() =>
        Directory.EnumerateDirectories(s_root, "jemalloc*.Tests")
            .SelectMany(project => Directory.EnumerateFiles(project, "*.cs", SearchOption.AllDirectories))
            .Where(f => !f.Contains($"{Path.DirectorySeparatorChar}obj{Path.DirectorySeparatorChar}", StringComparison.Ordinal)
                        && !f.Contains($"{Path.DirectorySeparatorChar}bin{Path.DirectorySeparatorChar}", StringComparison.Ordinal))
            .Select(f => (f, File.ReadAllText(f)));
}
