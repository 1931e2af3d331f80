namespace jemalloc.Tests.Layering;

/// <summary>The layering check itself, on small sources that keep or break a two-layer order.</summary>
public sealed class LayeringCheckTests
{
    private static readonly string[] s_layers = ["Low", "High"];

    [Fact]
    public void A_reference_to_a_later_layer_is_reported_with_its_file_line_and_folders()
    {
        List<string> problems = Check(
            ("Low/Low.cs", "namespace N;\ninternal static class Low\n{\n    internal static int Value => 1;\n\n    internal static int Up() => High.Value;\n}\n"),
            ("High/High.cs", "namespace N;\ninternal static class High\n{\n    internal static int Value => Low.Value + 1;\n}\n"));

        Assert.Equal(
            ["Low/Low.cs:6: Low uses High (N.High), a later layer", "Low/Low.cs:6: Low uses High (N.High.Value), a later layer"],
            problems);
    }

    [Fact]
    public void References_down_locals_parameters_and_a_partial_part_in_a_higher_folder_are_allowed()
    {
        List<string> problems = Check(
            ("Low/Low.cs", "namespace N;\ninternal static partial class Low\n{\n    internal static int Value(int x) { int y = x; return y; }\n}\n"),
            ("High/Low.High.cs", "namespace N;\ninternal static partial class Low\n{\n    internal static int Twice(int x) => Value(x) * 2;\n}\n"),
            ("High/High.cs", "namespace N;\ninternal static class High\n{\n    internal static int Value => Low.Twice(1) + Low.Value(2);\n}\n"));

        Assert.Empty(problems);
    }

    [Fact]
    public void A_sibling_in_the_same_layer_and_a_folder_in_no_layer_are_reported()
    {
        string[] layers = ["Low", "A / B"];
        var sources = new List<(string Path, string Text)>
        {
            ("A/A.cs", "namespace N;\ninternal static class A\n{\n    internal static int Value => B.Value;\n}\n"),
            ("B/B.cs", "namespace N;\ninternal static class B\n{\n    internal static int Value => 2;\n}\n"),
            ("Stray/S.cs", "namespace N;\ninternal static class S\n{\n}\n"),
        };
        List<FolderReference> references = FolderDependencies.Scan(sources, LayeringTests.RankOf(layers), out List<string> errors);
        Assert.Empty(errors);

        List<string> problems = LayeringTests.LayerViolations(layers, sources.Select(s => s.Path), references);

        Assert.Contains("A/A.cs:4: A uses B (N.B), a sibling in its layer", problems);
        Assert.Contains(problems, p => p.StartsWith("folder Stray is in no layer", StringComparison.Ordinal));
    }

    [Fact]
    public void An_internal_type_outside_its_folders_namespace_is_reported()
    {
        var sources = new List<(string Path, string Text)>
        {
            ("Low/Good.cs", "namespace jemalloc.Low;\ninternal static class Good\n{\n}\n"),
            ("Low/Bad.cs", "namespace jemalloc;\ninternal static class Bad\n{\n}\n"),
            ("Low/Public.cs", "namespace jemalloc;\npublic static class Public\n{\n}\n"),
        };

        List<string> problems = LayeringTests.NamespaceViolations(sources, LayeringTests.RankOf(s_layers));

        Assert.Equal(["Low/Bad.cs:2: internal Bad is in namespace jemalloc, not jemalloc.Low (folder Low)"], problems);
    }

    [Fact]
    public void A_public_type_outside_the_root_namespace_is_reported()
    {
        var sources = new List<(string Path, string Text)> { ("Low/P.cs", "namespace jemalloc.Low;\npublic static class P\n{\n}\n") };

        Assert.Equal(
            ["Low/P.cs:2: public P is in namespace jemalloc.Low, not jemalloc (the public surface is one namespace)"],
            LayeringTests.NamespaceViolations(sources, LayeringTests.RankOf(s_layers)));
    }

    [Fact]
    public void A_type_with_parts_in_two_folders_is_reported_and_parts_in_one_folder_are_not()
    {
        var sources = new List<(string Path, string Text)>
        {
            ("Low/Split.cs", "namespace N;\ninternal static partial class Split\n{\n}\n"),
            ("High/Split.High.cs", "namespace N;\ninternal static partial class Split\n{\n}\n"),
            ("Low/Whole.cs", "namespace N;\ninternal static partial class Whole\n{\n}\n"),
            ("Low/Whole.More.cs", "namespace N;\ninternal static partial class Whole\n{\n}\n"),
        };

        Assert.Equal(["N.Split`0: Low/Split.cs, High/Split.High.cs"], LayeringTests.SplitTypes(sources));
    }

    [Fact]
    public void A_later_folder_using_a_ledger_internal_other_than_the_owner_type_is_reported()
    {
        string[] layers = ["Ledger", "Buffers"];
        var sources = new List<(string Path, string Text)>
        {
            ("Ledger/LedgerBlock.cs", "namespace N;\ninternal readonly struct LedgerBlock\n{\n    internal void Free() { }\n}\n"),
            ("Ledger/SlotTable.cs", "namespace N;\ninternal static class SlotTable\n{\n    internal static int Take() => 1;\n}\n"),
            ("Ledger/Settings.cs", "namespace N;\npublic static class Settings\n{\n    public static bool On { get; set; }\n    internal static bool Hidden { get; set; }\n}\n"),
            ("Buffers/B.cs", "namespace N;\ninternal static class B\n{\n    internal static void Use(LedgerBlock block)\n    {\n        block.Free();\n        _ = SlotTable.Take();\n        Settings.On = Settings.Hidden;\n    }\n}\n"),
        };
        List<FolderReference> references = FolderDependencies.Scan(sources, LayeringTests.RankOf(layers), out List<string> errors);
        Assert.Empty(errors);

        List<string> problems = LayeringTests.LedgerBypasses(references, LayeringTests.RankOf(layers));

        Assert.Equal(["Buffers/B.cs:7: N.SlotTable", "Buffers/B.cs:7: N.SlotTable.Take()", "Buffers/B.cs:8: N.Settings.Hidden"], problems);
    }

    private static List<string> Check(params (string Path, string Text)[] sources)
    {
        List<FolderReference> references = FolderDependencies.Scan(sources, LayeringTests.RankOf(s_layers), out List<string> errors);
        Assert.Empty(errors);
        return LayeringTests.LayerViolations(s_layers, sources.Select(s => s.Path), references);
    }
}
