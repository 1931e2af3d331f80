using Xunit.Abstractions;

namespace jemalloc.Arrow.Tests;

/// <summary>
/// Arrow's integration files written on a big-endian and on a little-endian machine by another
/// implementation (Corpus/arrow-testing/integration): every column of a big-endian file reads as its
/// little-endian twin's, the little-endian file reads as Apache Arrow for .NET reads it (so the
/// byte swap is checked against a reference, not only against ourselves), a file and its stream read
/// alike, and every column refused is refused with a <see cref="NotSupportedException"/> naming the
/// column and its type: exactly the refusals the corpus README lists.
/// </summary>
public sealed class IpcCorpusByteOrderTests(ITestOutputHelper output) : LedgerBalanced
{
    // The refused columns of each file, by name, with a word the refusal must say (the README's list):
    // NotSupportedException for a type the reader does not read, InvalidDataException for values it
    // holds malformed (decimal128 values with more digits than the column's precision).
    private const string PastPrecision = "more digits than its precision";

    private static readonly Dictionary<string, (string Column, string Says)[]> Refused = new(StringComparer.Ordinal)
    {
        ["generated_primitive"] = [],
        ["generated_primitive_zerolength"] = [],
        ["generated_primitive_no_batches"] = [],
        ["generated_primitive_large_offsets"] = [],
        ["generated_datetime"] = [],
        ["generated_decimal"] = [.. Enumerable.Range(0, 36).Select(i => ("f" + i, PastPrecision))],
        ["generated_decimal256"] = [.. Enumerable.Range(0, 33).Select(i => ("f" + i, "a decimal of 256 bits"))],
        ["generated_null"] = [],
        ["generated_null_trivial"] = [],
        ["generated_dictionary"] = [("dict2", "dictionary-encoded")],
        ["generated_dictionary_unsigned"] = [],
        ["generated_interval"] = [("f5", "Interval"), ("f6", "Interval")],
        ["generated_nested"] = [("list_nullable", "List"), ("fixedsizelist_nullable", "FixedSizeList"), ("struct_nullable", "Struct")],
    };

    public static TheoryData<string> Names() => new(Refused.Keys);

    [Theory]
    [MemberData(nameof(Names))]
    public void Every_column_of_the_big_endian_file_reads_as_its_little_endian_twin_and_as_Apache_Arrow_reads_that(string name)
    {
        // decimal256 is vendored as streams only (the corpus README says why).
        ArrowIpcFormat[] formats = name == "generated_decimal256" ? [ArrowIpcFormat.Stream] : [ArrowIpcFormat.File, ArrowIpcFormat.Stream];
        List<IpcCorpus.Column>? first = null;
        foreach (ArrowIpcFormat format in formats)
        {
            List<IpcCorpus.Column> big = Read("bigendian", name, format, expectBig: true);
            List<IpcCorpus.Column> little = Read("littleendian", name, format, expectBig: false);
            AssertSame(little, big, $"{name} {format}: big-endian against little-endian");
            if (first is null)
            {
                first = little;
            }
            else
            {
                AssertSame(first, little, $"{name}: stream against file");
            }

            Dictionary<string, List<string?>> apache = IpcCorpus.ReadWithApache(IpcCorpus.Integration("littleendian", name, format), format);
            int compared = 0;
            int pastPrecision = 0;
            foreach (IpcCorpus.Column column in little.Where(c => c.Rows is not null))
            {
                Assert.True(apache.TryGetValue(column.Name, out List<string?>? expected), $"Apache Arrow has no column '{column.Name}'.");
                Assert.True(expected.SequenceEqual(column.Rows!), $"{name} {format}: column '{column.Name}' differs from Apache Arrow's reading: ours [{string.Join(", ", column.Rows!.Take(8))}], Apache [{string.Join(", ", expected.Take(8))}].");
                compared++;
            }

            string[] refused = little.Where(c => c.Refusal is not null).Select(c => c.Name).ToArray();
            Assert.True(Refused[name].Select(r => r.Column).SequenceEqual(refused), $"{name} {format}: refused [{string.Join("; ", little.Where(c => c.Refusal is not null).Select(c => c.Refusal!.GetType().Name + ": " + c.Refusal.Message))}], expected [{string.Join(", ", Refused[name].Select(r => r.Column))}].");
            foreach (IpcCorpus.Column column in big.Concat(little).Where(c => c.Refusal is not null))
            {
                string says = Refused[name].Single(r => r.Column == column.Name).Says;
                Assert.Contains($"'{column.Name}'", column.Refusal!.Message, StringComparison.Ordinal);
                Assert.Contains(says, column.Refusal.Message, StringComparison.Ordinal);
                if (says == PastPrecision)
                {
                    // The refusal names the first value past the precision: Apache Arrow's value at that row,
                    // so each refused column still checks one 16-byte value's swap against the reference.
                    Assert.IsType<InvalidDataException>(column.Refusal);
                    (int row, string unscaled) = FirstPastPrecision(apache[column.Name], column.Name, name, format);
                    Assert.Contains($"holds {unscaled} at row {row:N0}:", column.Refusal.Message, StringComparison.Ordinal);

                    // And every value, read past the check, against Apache Arrow's.
                    List<string?> rows = ReadPastPrecision(big.Contains(column) ? "bigendian" : "littleendian", name, format, column.Name);
                    Assert.True(apache[column.Name].SequenceEqual(rows), $"{name} {format}: column '{column.Name}' read past its precision differs from Apache Arrow's reading.");
                    pastPrecision++;
                }
                else
                {
                    Assert.IsType<NotSupportedException>(column.Refusal);
                }
            }

            output.WriteLine($"{name} {format}: {little.Count} columns, {compared} read equal (big-endian = little-endian = Apache Arrow), {refused.Length} refused ({pastPrecision / 2} by values past the precision, every value read past the check in both byte orders equal to Apache Arrow's): {string.Join("; ", little.Where(c => c.Refusal is not null).Select(c => c.Refusal!.Message))}");
        }
    }

    // The first row of Apache Arrow's reading whose unscaled value has more digits than the column's precision.
    private static (int Row, string Unscaled) FirstPastPrecision(List<string?> rows, string column, string name, ArrowIpcFormat format)
    {
        using var reader = new ArrowIpcReader(IpcCorpus.Integration("littleendian", name, format), format);
        int precision = reader.Fields[reader.GetColumnIndex(column)].Precision!.Value;
        for (int r = 0; r < rows.Count; r++)
        {
            string? unscaled = rows[r]?[..rows[r]!.IndexOf('e', StringComparison.Ordinal)];
            if (unscaled is not null && unscaled.TrimStart('-').Length > precision)
            {
                return (r, unscaled);
            }
        }

        throw new Xunit.Sdk.XunitException($"Column '{column}' of {name} has no value past its precision of {precision}.");
    }

    // A decimal column's values with no precision check (the tests' internal read).
    private static List<string?> ReadPastPrecision(string order, string name, ArrowIpcFormat format, string column)
    {
        using var reader = new ArrowIpcReader(IpcCorpus.Integration(order, name, format), format);
        using DecimalColumn values = reader.ReadDecimalColumnPastPrecision(column);
        var rows = new List<string?>();
        for (long r = 0; r < values.Length; r++)
        {
            rows.Add(values.IsNull(r) ? null : IpcCorpus.Decimal(values.GetUnscaled(r), values.Scale));
        }

        return rows;
    }

    private static List<IpcCorpus.Column> Read(string order, string name, ArrowIpcFormat format, bool expectBig)
    {
        using var reader = new ArrowIpcReader(IpcCorpus.Integration(order, name, format), format);
        Assert.Equal(expectBig, reader.IsBigEndian);
        return IpcCorpus.ReadAll(reader);
    }

    // A refusal's message without the file name a file's reader adds to what it finds malformed.
    private static string? WithoutFile(Exception? e)
    {
        int at = e?.Message.IndexOf(" (file '", StringComparison.Ordinal) ?? -1;
        return at < 0 ? e?.Message : e!.Message[..at];
    }

    private static void AssertSame(List<IpcCorpus.Column> expected, List<IpcCorpus.Column> actual, string what)
    {
        Assert.Equal(expected.Select(c => (c.Name, c.TypeName)), actual.Select(c => (c.Name, c.TypeName)));
        for (int i = 0; i < expected.Count; i++)
        {
            Assert.True(WithoutFile(expected[i].Refusal) == WithoutFile(actual[i].Refusal), $"{what}: column '{expected[i].Name}' refused differently: '{expected[i].Refusal?.Message}' against '{actual[i].Refusal?.Message}'.");
            if (expected[i].Rows is List<string?> rows)
            {
                Assert.True(rows.SequenceEqual(actual[i].Rows!), $"{what}: column '{expected[i].Name}' differs: [{string.Join(", ", rows.Take(8))}] against [{string.Join(", ", actual[i].Rows!.Take(8))}].");
            }
        }
    }
}
