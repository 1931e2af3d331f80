using System.Text;
using jemalloc.Cli.Strings;
using jemalloc.Parquet.Tests;

namespace jemalloc.Cli.Tests.Benchmarks;

/// <summary>
/// The table <c>jembench strings</c> writes, read by DuckDB (an independent Parquet reader): its
/// column types and codec, and the reference results recomputed there by SQL.
/// </summary>
[Collection(Verbs.JembenchRuns.Name)]
public sealed class StringsTableTests(StringsTableFixture table) : IClassFixture<StringsTableFixture>
{
    [Fact]
    public void DuckDB_reads_the_columns_with_the_issues_types_and_the_codec()
    {
        using var duck = new DuckDb();
        var types = new Dictionary<string, string>();
        duck.Query($"DESCRIBE SELECT * FROM read_parquet('{table.Path}')", r => types[r.GetString(0)] = r.GetString(1));
        Assert.Equal(["id", "category", "region", "note", "amount"], types.Keys);
        Assert.Equal("BIGINT", types["id"]);
        Assert.Equal("VARCHAR", types["category"]);
        Assert.Equal("VARCHAR", types["region"]);
        Assert.Equal("VARCHAR", types["note"]);
        Assert.Equal("DECIMAL(18,2)", types["amount"]);
        Assert.Equal(StringsTableFixture.Rows, duck.Scalar<long>($"SELECT count(*) FROM read_parquet('{table.Path}')"));
        Assert.Equal(0, duck.Scalar<long>($"SELECT count(*) FROM parquet_metadata('{table.Path}') WHERE compression <> 'ZSTD'"));
        Assert.True(duck.Scalar<long>($"SELECT count(DISTINCT row_group_id) FROM parquet_metadata('{table.Path}')") >= 2);
    }

    [Fact]
    public void DuckDB_finds_the_references_filtered_rows_groups_and_id_sum()
    {
        StringsReference reference = table.Reference;
        using var duck = new DuckDb();
        string file = $"read_parquet('{table.Path}')";
        Assert.Equal(reference.IdSum, duck.Scalar<long>($"SELECT CAST(sum(id) AS BIGINT) FROM {file}"));
        Assert.Equal(reference.FilteredRows, duck.Scalar<long>($"SELECT count(*) FROM {file} WHERE starts_with(note, '{StringsData.NotePrefix}')"));
        Assert.Equal(reference.StringBytes, duck.Scalar<long>($"SELECT CAST(sum(octet_length(encode(category)) + octet_length(encode(region)) + coalesce(octet_length(encode(note)), 0)) AS BIGINT) FROM {file}"));
        var groups = new List<StringsGroup>();
        duck.Query(
            $"SELECT category, count(*), CAST(coalesce(sum(CAST(amount * 100 AS BIGINT)), 0) AS BIGINT) FROM {file} WHERE starts_with(note, '{StringsData.NotePrefix}') GROUP BY category",
            r => groups.Add(new StringsGroup(r.GetString(0), r.GetInt64(1), r.GetInt64(2))));
        Assert.Equal(reference.Groups, StringsGroup.Sorted(groups));
    }

    [Fact]
    public void DuckDB_sees_the_datas_nulls_lengths_and_text()
    {
        using var duck = new DuckDb();
        string file = $"read_parquet('{table.Path}')";
        double rows = StringsTableFixture.Rows;
        Assert.InRange(duck.Scalar<long>($"SELECT count(*) FROM {file} WHERE note IS NULL") / rows, 0.03, 0.05);
        Assert.InRange(duck.Scalar<long>($"SELECT count(*) FROM {file} WHERE amount IS NULL") / rows, 0.02, 0.04);
        Assert.Equal(0, duck.Scalar<long>($"SELECT count(*) FROM {file} WHERE category IS NULL OR region IS NULL"));
        Assert.Equal(StringsData.Categories, duck.Scalar<long>($"SELECT count(DISTINCT category) FROM {file}"));
        Assert.Equal(StringsData.Regions, duck.Scalar<long>($"SELECT count(DISTINCT region) FROM {file}"));
        Assert.Equal(8, duck.Scalar<long>($"SELECT min(least(octet_length(encode(category)), octet_length(encode(region)))) FROM {file}"));
        Assert.Equal(40, duck.Scalar<long>($"SELECT max(greatest(octet_length(encode(category)), octet_length(encode(region)))) FROM {file}"));
        Assert.Equal(StringsData.MinNoteBytes, duck.Scalar<long>($"SELECT min(octet_length(encode(note))) FROM {file}"));
        Assert.Equal(StringsData.MaxNoteBytes, duck.Scalar<long>($"SELECT max(octet_length(encode(note))) FROM {file}"));
        // Some notes are not ASCII (more bytes than characters), and the near misses of the prefix are there.
        Assert.InRange(duck.Scalar<long>($"SELECT count(*) FROM {file} WHERE octet_length(encode(note)) > length(note)") / rows, 0.3, 1.0);
        Assert.InRange(duck.Scalar<long>($"SELECT count(*) FROM {file} WHERE starts_with(note, 'Überfällige')") / rows, 0.02, 0.04);
        Assert.InRange(duck.Scalar<long>($"SELECT count(*) FROM {file} WHERE starts_with(note, '{StringsData.NotePrefix}')") / rows, 0.02, 0.04);
        Assert.InRange(duck.Scalar<long>($"SELECT CAST(min(amount) * 100 AS BIGINT) FROM {file}"), -5_000_000, -4_990_000);
        Assert.InRange(duck.Scalar<long>($"SELECT CAST(max(amount) * 100 AS BIGINT) FROM {file}"), 14_990_000, 14_999_999);
        Assert.True(Encoding.UTF8.GetByteCount(StringsData.NotePrefix) > StringsData.NotePrefix.Length);
    }
}
