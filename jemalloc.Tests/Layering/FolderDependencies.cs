using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp;
using Microsoft.CodeAnalysis.CSharp.Syntax;

namespace jemalloc.Tests.Layering;

/// <summary>
/// One use of a type declared in another folder: where it is, which folders it joins, the outermost
/// type it names or whose member it uses, and whether that symbol is public API (it and every type around it public).
/// </summary>
internal readonly record struct FolderReference(string File, int Line, string From, string To, string Symbol, string Type = "", bool Public = false)
{
    public override string ToString() => $"{File}:{Line}: {From} -> {To} ({Symbol})";
}

/// <summary>
/// Parses and binds a set of C# sources as one compilation and lists every reference from a file in one
/// folder to a type (or a member of a type) declared in another folder. The folder of a file is the first
/// directory under the root. A type belongs to the folder of its outermost type, and a type whose
/// partial parts lie in several folders to the lowest of them (by the given rank); a member belongs to
/// the folder of the part that declares it. Locals, parameters and namespaces are no dependency.
/// </summary>
internal static class FolderDependencies
{
    // What ImplicitUsings adds for a Microsoft.NET.Sdk library (the generated file lives in obj/, not scanned).
    private const string ImplicitUsings =
        "global using System; global using System.Collections.Generic; global using System.IO; global using System.Linq; " +
        "global using System.Net.Http; global using System.Threading; global using System.Threading.Tasks;";

    /// <summary>Binds <paramref name="sources"/> (path relative to the root, text) and returns the cross-folder references.</summary>
    /// <param name="sources">The files; a path's first segment is its folder.</param>
    /// <param name="rank">The layer of a folder, lowest first; a partial type belongs to its lowest folder.</param>
    /// <param name="errors">The compiler errors, apart from those of source generators that do not run here.</param>
    public static List<FolderReference> Scan(IReadOnlyList<(string Path, string Text)> sources, Func<string, int> rank, out List<string> errors)
    {
        CSharpParseOptions parse = new(LanguageVersion.Preview);
        var trees = sources
            .Select(s => CSharpSyntaxTree.ParseText(s.Text, parse, s.Path.Replace('\\', '/')))
            .Append(CSharpSyntaxTree.ParseText(ImplicitUsings, parse, "ImplicitUsings.g.cs"))
            .ToList();
        CSharpCompilation compilation = CSharpCompilation.Create(
            "layering",
            trees,
            References(),
            new CSharpCompilationOptions(OutputKind.DynamicallyLinkedLibrary, allowUnsafe: true, nullableContextOptions: NullableContextOptions.Enable));

        // LibraryImport's generator does not run, so its partial methods have no bodies (CS8795), and flow
        // analysis differs from the SDK's build on a pointer to a local (CS0165); any other error would mean
        // a symbol went unbound and a reference could be missed.
        errors = compilation.GetDiagnostics()
            .Where(d => d.Severity == DiagnosticSeverity.Error && d.Id is not ("CS8795" or "CS0165"))
            .Select(d => d.ToString())
            .ToList();

        var found = new List<FolderReference>();
        foreach (SyntaxTree tree in trees)
        {
            string? from = FolderOf(tree.FilePath);
            if (from is null)
            {
                continue;
            }

            SemanticModel model = compilation.GetSemanticModel(tree);
            foreach (SyntaxNode node in tree.GetRoot().DescendantNodes())
            {
                ISymbol? symbol = node switch
                {
                    SimpleNameSyntax or ImplicitObjectCreationExpressionSyntax => model.GetSymbolInfo(node).Symbol,
                    BinaryExpressionSyntax or PrefixUnaryExpressionSyntax or PostfixUnaryExpressionSyntax => model.GetSymbolInfo(node).Symbol,
                    _ => null,
                };
                string? to = symbol is null ? null : DeclaringFolder(symbol, rank);
                if (to is not null && to != from)
                {
                    int line = node.GetLocation().GetLineSpan().StartLinePosition.Line + 1;
                    found.Add(new FolderReference(tree.FilePath, line, from, to, symbol!.ToDisplayString(), OutermostTypeName(symbol), IsPublicApi(symbol)));
                }
            }
        }

        return found;
    }

    private static string OutermostTypeName(ISymbol symbol)
    {
        INamedTypeSymbol? type = symbol as INamedTypeSymbol ?? symbol.ContainingType;
        while (type?.ContainingType is not null)
        {
            type = type.ContainingType;
        }

        return type?.Name ?? "";
    }

    private static bool IsPublicApi(ISymbol symbol)
    {
        for (ISymbol? s = symbol; s is not null and not INamespaceSymbol; s = s.ContainingSymbol)
        {
            if (s.DeclaredAccessibility != Accessibility.Public)
            {
                return false;
            }
        }

        return true;
    }

    private static string? FolderOf(string path)
    {
        int slash = path.IndexOf('/', StringComparison.Ordinal);
        return slash < 0 ? null : path[..slash];
    }

    private static string? DeclaringFolder(ISymbol symbol, Func<string, int> rank)
    {
        switch (symbol)
        {
            case IMethodSymbol { ReducedFrom: { } extension }:
                return SourceFolder(extension.OriginalDefinition);
            case IMethodSymbol or IFieldSymbol or IPropertySymbol or IEventSymbol when !symbol.IsImplicitlyDeclared:
                return SourceFolder(symbol.OriginalDefinition);
            case IMethodSymbol or IFieldSymbol or IPropertySymbol or IEventSymbol:
                return TypeFolder(symbol.ContainingType, rank);
            case ITypeSymbol type:
                return TypeFolder(type, rank);
            default:
                return null;
        }
    }

    private static string? SourceFolder(ISymbol symbol)
    {
        Location? source = symbol.Locations.FirstOrDefault(l => l.IsInSource);
        return source is null ? null : FolderOf(source.SourceTree!.FilePath);
    }

    private static string? TypeFolder(ITypeSymbol? type, Func<string, int> rank)
    {
        while (type is IArrayTypeSymbol or IPointerTypeSymbol)
        {
            type = type is IArrayTypeSymbol array ? array.ElementType : ((IPointerTypeSymbol)type).PointedAtType;
        }

        if (type is not INamedTypeSymbol named)
        {
            return null;
        }

        named = named.OriginalDefinition;
        while (named.ContainingType is not null)
        {
            named = named.ContainingType;
        }

        return named.Locations
            .Where(l => l.IsInSource)
            .Select(l => FolderOf(l.SourceTree!.FilePath))
            .OfType<string>()
            .OrderBy(rank)
            .FirstOrDefault();
    }

    // The runtime's own assemblies from the trusted platform list (not the test's dependencies, which include
    // jemalloc.Api.dll itself and would make every type ambiguous), plus the packages jemalloc.Api uses.
    private static List<MetadataReference> References()
    {
        string runtime = Path.GetDirectoryName(typeof(object).Assembly.Location)!;
        string tensors = typeof(System.Numerics.Tensors.TensorPrimitives).Assembly.Location;
        string hashing = typeof(System.IO.Hashing.XxHash3).Assembly.Location;
        return ((string)AppContext.GetData("TRUSTED_PLATFORM_ASSEMBLIES")!)
            .Split(Path.PathSeparator)
            .Where(p => string.Equals(Path.GetDirectoryName(p), runtime, StringComparison.Ordinal) || p == tensors || p == hashing)
            .Select(p => (MetadataReference)MetadataReference.CreateFromFile(p))
            .ToList();
    }
}
