using System.Text;
using System.Text.RegularExpressions;

namespace jemalloc.Tests.Docs;

/// <summary>
/// Checks Markdown pages the way a reader follows them: every relative link (file and #anchor) must
/// resolve, and every C# code block must be the text of a test region of the same id.
/// </summary>
internal static partial class MarkdownCheck
{
    /// <summary>The marker a C# block needs on the line before it: <c>&lt;!-- example: ID --&gt;</c>.</summary>
    [GeneratedRegex(@"^<!--\s*example:\s*(?<id>[A-Za-z0-9_.-]+)\s*-->\s*$")]
    private static partial Regex ExampleMarker();

    [GeneratedRegex(@"^\s*#region\s+example:\s*(?<id>[A-Za-z0-9_.-]+)\s*$")]
    private static partial Regex RegionStart();

    [GeneratedRegex(@"^\s*#endregion\b")]
    private static partial Regex RegionEnd();

    // [text](target) and ![alt](target), target without spaces, optionally followed by a "title".
    [GeneratedRegex(@"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\((?<target>[^)\s]+)(?:\s+""[^""]*"")?\)")]
    private static partial Regex Link();

    [GeneratedRegex(@"^(?<hashes>#{1,6})\s+(?<text>.+?)\s*#*\s*$")]
    private static partial Regex Heading();

    [GeneratedRegex(@"<a\s+(?:name|id)=""(?<id>[^""]+)""")]
    private static partial Regex HtmlAnchor();

    [GeneratedRegex(@"`[^`]*`")]
    private static partial Regex InlineCode();

    /// <summary>A fenced code block: its info string, its first line number (1-based) and its text.</summary>
    internal readonly record struct CodeBlock(string Language, int Line, string? ExampleId, string Text);

    /// <summary>The lines of <paramref name="markdown"/> outside fenced code blocks (code lines as empty), and the blocks.</summary>
    internal static (string[] Prose, List<CodeBlock> Blocks) Split(string markdown)
    {
        string[] lines = markdown.Replace("\r\n", "\n", StringComparison.Ordinal).Split('\n');
        string[] prose = new string[lines.Length];
        var blocks = new List<CodeBlock>();
        int i = 0;
        while (i < lines.Length)
        {
            string trimmed = lines[i].TrimStart();
            if (!trimmed.StartsWith("```", StringComparison.Ordinal))
            {
                prose[i] = lines[i];
                i++;
                continue;
            }

            int fenceIndent = lines[i].Length - trimmed.Length;
            string language = trimmed[3..].Trim();
            string? id = null;
            for (int back = i - 1; back >= 0; back--)
            {
                if (lines[back].Trim().Length == 0)
                {
                    continue;
                }

                Match marker = ExampleMarker().Match(lines[back].Trim());
                id = marker.Success ? marker.Groups["id"].Value : null;
                break;
            }

            int start = i;
            prose[i] = string.Empty;
            var text = new StringBuilder();
            i++;
            while (i < lines.Length && !lines[i].TrimStart().StartsWith("```", StringComparison.Ordinal))
            {
                string line = lines[i];
                text.Append(line.Length >= fenceIndent && line[..fenceIndent].Trim().Length == 0 ? line[fenceIndent..] : line.TrimStart()).Append('\n');
                prose[i] = string.Empty;
                i++;
            }

            if (i < lines.Length)
            {
                prose[i] = string.Empty;
                i++;
            }

            blocks.Add(new CodeBlock(language, start + 1, id, text.ToString()));
        }

        return (prose, blocks);
    }

    /// <summary>GitHub's anchor for a heading: lower case, markup and punctuation dropped, spaces to hyphens, repeats numbered.</summary>
    internal static HashSet<string> Anchors(string markdown)
    {
        var anchors = new HashSet<string>(StringComparer.Ordinal);
        var seen = new Dictionary<string, int>(StringComparer.Ordinal);
        foreach (string line in Split(markdown).Prose)
        {
            foreach (Match html in HtmlAnchor().Matches(line))
            {
                anchors.Add(html.Groups["id"].Value);
            }

            Match heading = Heading().Match(line);
            if (!heading.Success)
            {
                continue;
            }

            string slug = Slug(heading.Groups["text"].Value);
            if (seen.TryGetValue(slug, out int count))
            {
                seen[slug] = count + 1;
                anchors.Add($"{slug}-{count}");
            }
            else
            {
                seen[slug] = 1;
                anchors.Add(slug);
            }
        }

        return anchors;
    }

    internal static string Slug(string heading)
    {
        // Link text stands for the link: [text](target) -> text.
        string text = Regex.Replace(heading, @"\[([^\]]*)\]\([^)]*\)", "$1");
        var slug = new StringBuilder(text.Length);
        foreach (char c in text.ToLowerInvariant())
        {
            if (char.IsLetterOrDigit(c) || c == '-' || c == '_')
            {
                slug.Append(c);
            }
            else if (c == ' ')
            {
                slug.Append('-');
            }
        }

        return slug.ToString();
    }

    /// <summary>Every relative link of <paramref name="file"/> that does not resolve, as "file:line: target (why)".</summary>
    internal static List<string> BrokenLinks(string file, string markdown, Func<string, string?> readFile, Func<string, bool> directoryExists)
    {
        var broken = new List<string>();
        string[] prose = Split(markdown).Prose;
        string directory = Path.GetDirectoryName(file) ?? string.Empty;
        for (int n = 0; n < prose.Length; n++)
        {
            string line = InlineCode().Replace(prose[n], string.Empty);
            foreach (Match link in Link().Matches(line))
            {
                string target = link.Groups["target"].Value;
                if (target.Contains("://", StringComparison.Ordinal) || target.StartsWith("mailto:", StringComparison.Ordinal))
                {
                    continue;
                }

                int hash = target.IndexOf('#', StringComparison.Ordinal);
                string pathPart = hash < 0 ? target : target[..hash];
                string? anchor = hash < 0 ? null : target[(hash + 1)..];
                string resolved = pathPart.Length == 0 ? file : Path.GetFullPath(Path.Combine(directory, Uri.UnescapeDataString(pathPart)));
                string? text = readFile(resolved);
                if (text is null)
                {
                    if (anchor is null && directoryExists(resolved))
                    {
                        continue;
                    }

                    broken.Add($"{file}:{n + 1}: {target} (no such file)");
                    continue;
                }

                if (anchor is not null && !Anchors(text).Contains(anchor))
                {
                    broken.Add($"{file}:{n + 1}: {target} (no heading or anchor '{anchor}' in {Path.GetFileName(resolved)})");
                }
            }
        }

        return broken;
    }

    /// <summary>The regions <c>#region example: ID</c> of C# sources, by id, their common indentation removed.</summary>
    internal static Dictionary<string, string> ExampleRegions(IEnumerable<(string File, string Text)> sources, List<string> problems)
    {
        var regions = new Dictionary<string, string>(StringComparer.Ordinal);
        foreach ((string file, string source) in sources)
        {
            string[] lines = source.Replace("\r\n", "\n", StringComparison.Ordinal).Split('\n');
            for (int i = 0; i < lines.Length; i++)
            {
                Match start = RegionStart().Match(lines[i]);
                if (!start.Success)
                {
                    continue;
                }

                string id = start.Groups["id"].Value;
                int end = i + 1;
                while (end < lines.Length && !RegionEnd().IsMatch(lines[end]))
                {
                    end++;
                }

                if (end == lines.Length)
                {
                    problems.Add($"{file}:{i + 1}: region 'example: {id}' has no #endregion");
                    continue;
                }

                if (!regions.TryAdd(id, Normalize(lines[(i + 1)..end])))
                {
                    problems.Add($"{file}:{i + 1}: a second region 'example: {id}'");
                }

                i = end;
            }
        }

        return regions;
    }

    /// <summary>The C# blocks of a page that are not the text of their test region, as "file:line: why".</summary>
    internal static List<string> StaleExamples(string file, string markdown, IReadOnlyDictionary<string, string> regions)
    {
        var stale = new List<string>();
        foreach (CodeBlock block in Split(markdown).Blocks)
        {
            if (block.Language is not ("csharp" or "cs" or "c#"))
            {
                continue;
            }

            if (block.ExampleId is null)
            {
                stale.Add($"{file}:{block.Line}: a C# block without an '<!-- example: ID -->' marker before it, so no test compiles it");
                continue;
            }

            if (!regions.TryGetValue(block.ExampleId, out string? expected))
            {
                stale.Add($"{file}:{block.Line}: example '{block.ExampleId}' has no '#region example: {block.ExampleId}' in the tests");
                continue;
            }

            string actual = Normalize(block.Text.Split('\n'));
            if (actual != expected)
            {
                stale.Add($"{file}:{block.Line}: example '{block.ExampleId}' differs from its test region: {FirstDifference(actual, expected)}");
            }
        }

        return stale;
    }

    /// <summary>Lines without trailing spaces, leading and trailing empty lines and their common indentation.</summary>
    internal static string Normalize(IEnumerable<string> lines)
    {
        List<string> list = lines.Select(l => l.TrimEnd()).ToList();
        while (list.Count > 0 && list[0].Length == 0)
        {
            list.RemoveAt(0);
        }

        while (list.Count > 0 && list[^1].Length == 0)
        {
            list.RemoveAt(list.Count - 1);
        }

        int indent = list.Where(l => l.Length > 0).Select(l => l.Length - l.TrimStart().Length).DefaultIfEmpty(0).Min();
        return string.Join('\n', list.Select(l => l.Length >= indent ? l[indent..] : l));
    }

    private static string FirstDifference(string actual, string expected)
    {
        string[] a = actual.Split('\n');
        string[] e = expected.Split('\n');
        for (int i = 0; i < Math.Max(a.Length, e.Length); i++)
        {
            string left = i < a.Length ? a[i] : "(end)";
            string right = i < e.Length ? e[i] : "(end)";
            if (left != right)
            {
                return $"line {i + 1} of the block reads \"{left}\", the test has \"{right}\"";
            }
        }

        return "whitespace";
    }
}
