using System.Globalization;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp;
using Microsoft.CodeAnalysis.CSharp.Syntax;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.Layering;

/// <summary>
/// The folders of jemalloc.Api form layers, each using only the ones before it (docs/design-notes.md#layers).
/// A file may use its own folder and any folder of an earlier layer; folders of one layer (written
/// <c>A / B</c>) do not use each other. A lower layer that must reach a higher one does it through an
/// interface or a callback the higher layer registers.
/// </summary>
public sealed class LayeringTests
{
    /// <summary>The layers, lowest first: the same one line as docs/design-notes.md.</summary>
    internal static readonly string[] Layers =
    [
        "Internal", "Interop", "Simd", "Mallctl", "Configuration", "HugePages", "ArenaBooks", "Memory", "Jem", "Ledger",
        "Buffers", "Arenas", "Records / IO / Tuning", "Columns / Caching",
    ];

    private static readonly string s_api = Path.Combine(RepositoryPaths.Root, "jemalloc.Api");

    [Fact]
    public void Every_folder_of_the_library_uses_only_the_layers_before_it()
    {
        List<(string Path, string Text)> sources = ApiSources();
        List<FolderReference> references = FolderDependencies.Scan(sources, RankOf(Layers), out List<string> errors);
        Assert.True(errors.Count == 0, "jemalloc.Api did not bind, so references could be missed:\n" + string.Join('\n', errors.Take(20)));
        Assert.True(references.Count > 100, $"only {references.Count} references between folders found: the scan is broken");

        List<string> problems = LayerViolations(Layers, sources.Select(s => s.Path), references);
        Assert.True(problems.Count == 0, $"{problems.Count} references break the layering {string.Join(" → ", Layers)}:\n" + string.Join('\n', problems));
    }

    /// <summary>
    /// The internal types a later folder may use from <c>Ledger/</c>: the owner type of an allocation, and
    /// the interface through which an arena reset tells a structure. Everything else there (the slot
    /// table, the raw handle functions, the quarantine) is the ledger's own; the public surface
    /// (leases, holds, handles, the ledger's settings and diagnostics) is open to any caller anyway.
    /// </summary>
    internal static readonly string[] LedgerEntryPoints = ["LedgerBlock", "IAllocationOwner"];

    [Fact]
    public void Later_folders_reach_the_ledger_only_through_its_owner_type_and_public_surface()
    {
        List<(string Path, string Text)> sources = ApiSources();
        List<FolderReference> references = FolderDependencies.Scan(sources, RankOf(Layers), out List<string> errors);
        Assert.True(errors.Count == 0, "jemalloc.Api did not bind:\n" + string.Join('\n', errors.Take(20)));
        Assert.Contains(references, r => r.To == "Ledger" && r.Type == "LedgerBlock");

        List<string> problems = LedgerBypasses(references, RankOf(Layers));
        Assert.True(problems.Count == 0, $"{problems.Count} uses of the ledger's internals from later folders (use {string.Join(" or ", LedgerEntryPoints)}):\n" + string.Join('\n', problems));
    }

    /// <summary>Every reference from a folder above <c>Ledger</c> to an internal of it other than <see cref="LedgerEntryPoints"/>.</summary>
    internal static List<string> LedgerBypasses(IEnumerable<FolderReference> references, Func<string, int> rank) =>
        references
            .Where(r => r.To == "Ledger" && rank(r.From) > rank("Ledger") && !r.Public && !LedgerEntryPoints.Contains(r.Type, StringComparer.Ordinal))
            .Select(r => $"{r.File}:{r.Line}: {r.Symbol}")
            .Distinct(StringComparer.Ordinal)
            .ToList();

    [Theory]
    [InlineData("README.md")]
    [InlineData("docs/design-notes.md")]
    public void The_layer_line_of_a_page_is_the_one_this_test_enforces(string page)
    {
        // Lines joined with single spaces: the README wraps its layer line.
        string text = string.Join(' ', File.ReadAllLines(Path.Combine(RepositoryPaths.Root, page)).Select(line => line.Trim()));
        string layerLine = "`" + string.Join(" → ", Layers) + "`";
        Assert.True(text.Contains(layerLine, StringComparison.Ordinal), $"{page} does not give the layers as {layerLine}.");
    }

    [Fact]
    public void Every_internal_type_is_in_the_namespace_of_its_folder()
    {
        List<(string Path, string Text)> sources = ApiSources();
        List<string> problems = NamespaceViolations(sources, RankOf(Layers));
        Assert.True(problems.Count == 0, "Internal types outside their folder's namespace:\n" + string.Join('\n', problems));
    }

    /// <summary>The longest a file of the library may be: past it, a file holds more than one responsibility.</summary>
    internal const int MaxFileLines = 650;

    [Fact]
    public void No_file_of_the_library_is_longer_than_the_limit()
    {
        List<string> problems = ApiSources()
            .Select(s => (s.Path, Lines: s.Text.Split('\n').Length - (s.Text.EndsWith('\n') ? 1 : 0)))
            .Where(f => f.Lines > MaxFileLines)
            .Select(f => $"{f.Path}: {f.Lines} lines")
            .ToList();
        Assert.True(problems.Count == 0, $"Files over {MaxFileLines} lines (split them by responsibility):\n" + string.Join('\n', problems));
    }

    [Fact]
    public void No_type_is_split_across_folders()
    {
        List<string> problems = SplitTypes(ApiSources());
        Assert.True(problems.Count == 0, "Types with parts in more than one folder (a type lives in one layer):\n" + string.Join('\n', problems));
    }

    /// <summary>Every top-level type (by namespace, name and arity) declared in files of more than one folder.</summary>
    internal static List<string> SplitTypes(List<(string Path, string Text)> sources)
    {
        var parts = new List<(string Key, string File)>();
        foreach ((string path, string text) in sources.Where(s => s.Path.Contains('/', StringComparison.Ordinal)))
        {
            SyntaxNode root = CSharpSyntaxTree.ParseText(text).GetRoot();
            foreach (BaseNamespaceDeclarationSyntax space in root.DescendantNodes().OfType<BaseNamespaceDeclarationSyntax>())
            {
                foreach (TypeDeclarationSyntax type in space.Members.OfType<TypeDeclarationSyntax>())
                {
                    parts.Add(($"{space.Name}.{type.Identifier.Text}`{type.Arity}", path));
                }
            }
        }

        return parts
            .GroupBy(p => p.Key, StringComparer.Ordinal)
            .Where(g => g.Select(p => p.File[..p.File.IndexOf('/', StringComparison.Ordinal)]).Distinct(StringComparer.Ordinal).Count() > 1)
            .Select(g => $"{g.Key}: {string.Join(", ", g.Select(p => p.File))}")
            .ToList();
    }

    /// <summary>
    /// Every public type outside <c>jemalloc</c>, and every internal top-level type whose namespace is not <c>jemalloc.</c> and its folder (<c>jemalloc</c>
    /// for the Jem folder, where a namespace would clash with the <c>Jem</c> class). A partial type's
    /// parts take the namespace of the lowest folder that holds one.
    /// </summary>
    internal static List<string> NamespaceViolations(List<(string Path, string Text)> sources, Func<string, int> rank)
    {
        var parts = new List<(string File, int Line, string Folder, string Namespace, string Name, bool Public)>();
        foreach ((string path, string text) in sources.Where(s => s.Path.Contains('/', StringComparison.Ordinal)))
        {
            string folder = path[..path.IndexOf('/', StringComparison.Ordinal)];
            SyntaxNode root = CSharpSyntaxTree.ParseText(text).GetRoot();
            foreach (BaseNamespaceDeclarationSyntax space in root.DescendantNodes().OfType<BaseNamespaceDeclarationSyntax>())
            {
                foreach (BaseTypeDeclarationSyntax type in space.Members.OfType<BaseTypeDeclarationSyntax>())
                {
                    int line = type.GetLocation().GetLineSpan().StartLinePosition.Line + 1;
                    parts.Add((path, line, folder, space.Name.ToString(), type.Identifier.Text, type.Modifiers.Any(SyntaxKind.PublicKeyword)));
                }
            }
        }

        var problems = parts
            .Where(p => p.Public && p.Namespace != "jemalloc")
            .Select(p => $"{p.File}:{p.Line}: public {p.Name} is in namespace {p.Namespace}, not jemalloc (the public surface is one namespace)")
            .ToList();
        foreach (var type in parts.Where(p => !p.Public).GroupBy(p => p.Name, StringComparer.Ordinal))
        {
            string home = type.OrderBy(p => rank(p.Folder)).First().Folder;
            string expected = home == "Jem" ? "jemalloc" : "jemalloc." + home;
            problems.AddRange(type
                .Where(p => p.Namespace != expected)
                .Select(p => $"{p.File}:{p.Line}: internal {p.Name} is in namespace {p.Namespace}, not {expected} (folder {home})"));
        }

        return problems;
    }

    /// <summary>The layer index of a folder (folders in no layer rank last).</summary>
    internal static Func<string, int> RankOf(string[] layers) =>
        folder => Array.FindIndex(layers, l => l.Split('/', StringSplitOptions.TrimEntries).Contains(folder, StringComparer.Ordinal)) is int i and >= 0 ? i : int.MaxValue;

    /// <summary>Every folder that is in no layer, and every reference that goes to a later layer or a sibling.</summary>
    internal static List<string> LayerViolations(string[] layers, IEnumerable<string> files, List<FolderReference> references)
    {
        var layerOf = new Dictionary<string, int>(StringComparer.Ordinal);
        for (int i = 0; i < layers.Length; i++)
        {
            foreach (string folder in layers[i].Split('/', StringSplitOptions.TrimEntries))
            {
                layerOf.Add(folder, i);
            }
        }

        var problems = files
            .Where(f => f.Contains('/', StringComparison.Ordinal))
            .Select(f => f[..f.IndexOf('/', StringComparison.Ordinal)])
            .Distinct(StringComparer.Ordinal)
            .Where(folder => !layerOf.ContainsKey(folder))
            .Select(folder => $"folder {folder} is in no layer: add it to {nameof(LayeringTests)}.{nameof(Layers)} and docs/design-notes.md")
            .ToList();
        problems.AddRange(references
            .Where(r => layerOf.TryGetValue(r.From, out int from) && layerOf.TryGetValue(r.To, out int to) && to >= from)
            .Select(r => string.Create(CultureInfo.InvariantCulture,
                $"{r.File}:{r.Line}: {r.From} uses {r.To} ({r.Symbol}), {(layerOf[r.From] == layerOf[r.To] ? "a sibling in its layer" : "a later layer")}"))
            .Distinct(StringComparer.Ordinal));
        return problems;
    }

    private static List<(string Path, string Text)> ApiSources() =>
        Directory.EnumerateFiles(s_api, "*.cs", SearchOption.AllDirectories)
            .Select(f => Path.GetRelativePath(s_api, f).Replace('\\', '/'))
            .Where(f => !f.StartsWith("obj/", StringComparison.Ordinal) && !f.StartsWith("bin/", StringComparison.Ordinal))
            .Order(StringComparer.Ordinal)
            .Select(f => (f, File.ReadAllText(Path.Combine(s_api, f))))
            .ToList();
}
