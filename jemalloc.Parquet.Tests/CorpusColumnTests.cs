using DuckDB.NET.Data;

namespace jemalloc.Parquet.Tests;

/// <summary>
/// Every column of Apache parquet-testing's well-formed files (written by impala, parquet-mr, Spark,
/// parquet-cpp, parquet-rs and others) read by our public reader and compared value by value, nulls
/// included, with DuckDB's reading of the same file (or, where DuckDB cannot read it or reads it otherwise
/// than the file's own description, the twin or the description listed in <see cref="ParquetTestingCorpus"/>);
/// each case names its file and column. No column that is not repeated is refused; a repeated one (in
/// a list or map) is refused with an exception naming the file, the column and its types.
/// </summary>
public sealed class CorpusColumnTests : LedgerBalanced
{
    // Far more than any file of the corpus takes; a read that hangs fails the case instead of the run.
    private const int Timeout = 120_000;

    [Theory(Timeout = Timeout)]
    [MemberData(nameof(ParquetTestingCorpus.FlatColumns), MemberType = typeof(ParquetTestingCorpus))]
    public Task Every_column_that_is_not_repeated_reads_as_DuckDB_reads_it(string file, string column) =>
        Task.Run(() => CheckColumn(file, column));

    [Theory(Timeout = Timeout)]
    [MemberData(nameof(ParquetTestingCorpus.RepeatedColumns), MemberType = typeof(ParquetTestingCorpus))]
    public Task A_repeated_column_is_refused_with_NotSupportedException_naming_the_file_and_column(string file, string column) =>
        Task.Run(() =>
        {
            string path = ParquetTestingCorpus.PathOf(file);
            using var reader = new NativeParquetReader(path);
            ParquetColumnInfo info = reader.GetColumnInfo(column);
            NotSupportedException error = Assert.Throws<NotSupportedException>(() => CorpusValues.ReadOurs(reader, column));
            Assert.Contains(path, error.Message, StringComparison.Ordinal);
            Assert.Contains($"'{column}'", error.Message, StringComparison.Ordinal);
            Assert.Contains($"({info.PhysicalType}, logical type {info.LogicalTypeText})", error.Message, StringComparison.Ordinal);
            Assert.Contains("repeated", error.Message, StringComparison.Ordinal);
        });

    [Fact]
    public void Every_listed_twin_and_expectation_is_a_column_or_file_of_the_corpus()
    {
        var columns = ParquetTestingCorpus.FlatColumns().Select(row => $"{row[0]}|{row[1]}").ToHashSet(StringComparer.Ordinal);
        Assert.All(ParquetTestingCorpus.OwnExpectations.Keys, key => Assert.Contains(key, columns));
        var files = ParquetTestingCorpus.AllFiles().ToHashSet(StringComparer.Ordinal);
        Assert.All(ParquetTestingCorpus.DuckDbTwins, pair =>
        {
            Assert.Contains(pair.Key.Split('|')[0], files);
            Assert.Contains(pair.Value.Split('|')[0], files);
            Assert.Equal(pair.Key.Contains('|', StringComparison.Ordinal), pair.Value.Contains('|', StringComparison.Ordinal));
            if (pair.Key.Contains('|', StringComparison.Ordinal))
            {
                Assert.Contains(pair.Key, columns);
                Assert.Contains(pair.Value, columns);
            }
        });
        Assert.All(ParquetTestingCorpus.Malformed.Keys, file => Assert.Contains(file, files));
    }

    private static void CheckColumn(string file, string column)
    {
        string path = ParquetTestingCorpus.PathOf(file);
        using var reader = new NativeParquetReader(path);
        ParquetColumnInfo info = reader.GetColumnInfo(column);
        string?[] ours = CorpusValues.ReadOurs(reader, column);
        Assert.Equal(reader.RowCount, ours.Length);
        (string twinFile, string twinColumn) = ParquetTestingCorpus.CheckedAgainst(file, column);
        string checkedAgainst = $"DuckDB's reading of {twinFile}, column '{twinColumn}',";
        using var duck = new DuckDb();
        if ((twinFile, twinColumn) != (file, column))
        {
            // The twin stands in only while DuckDB cannot read the column itself.
            Assert.Throws<DuckDBException>(() => CorpusValues.ReadDuckDb(duck, path, column, info));
        }

        string?[] duckDb = CorpusValues.ReadDuckDb(duck, ParquetTestingCorpus.PathOf(twinFile), twinColumn, info);
        if (ParquetTestingCorpus.OwnExpectations.TryGetValue($"{file}|{column}", out string?[]? described))
        {
            Assert.False(duckDb.SequenceEqual(described), $"DuckDB now reads {file}, column '{column}' as its description says: compare with DuckDB again.");
            duckDb = described;
            checkedAgainst = $"the description of {file}";
        }

        Assert.True(duckDb.Length == ours.Length, $"{file}, column '{column}' ({info}): {checkedAgainst} has {duckDb.Length} rows, we read {ours.Length}.");
        for (int row = 0; row < ours.Length; row++)
        {
            if (!string.Equals(duckDb[row], ours[row], StringComparison.Ordinal))
            {
                Assert.Fail($"{file}, column '{column}' ({info}), row {row}: {checkedAgainst} has {duckDb[row] ?? "null"}, we read {ours[row] ?? "null"}.");
            }
        }
    }
}
