using DuckDB.NET.Data;

namespace jemalloc.Parquet.Tests;

/// <summary>
/// Apache parquet-testing's damaged and forged files (bad_data/, the pages with a wrong CRC, a malformed
/// dictionary...): each column reads equal to DuckDB's reading, or reads where DuckDB cannot (a silent read
/// listed with its reason in <see cref="ParquetTestingCorpus.Malformed"/>), or is refused with an exception
/// of a conventional type naming the file. The ledger is back where it was after each file, and no case
/// can wait unbounded.
/// </summary>
public sealed class MalformedCorpusTests : LedgerBalanced
{
    private const int Timeout = 120_000;

    [Theory(Timeout = Timeout)]
    [MemberData(nameof(ParquetTestingCorpus.MalformedFiles), MemberType = typeof(ParquetTestingCorpus))]
    public Task Each_column_of_a_malformed_file_reads_as_listed_or_is_refused_naming_the_file(string file) =>
        Task.Run(() =>
        {
            MalformedExpectation expected = ParquetTestingCorpus.Malformed[file];
            SortedDictionary<string, string> outcomes = Outcomes(file, ParquetReadOptions.Default);
            Assert.NotEmpty(outcomes);
            HashSet<string> repeated = outcomes.ContainsKey(MalformedExpectation.Open) ? [] : ParquetTestingCorpus.RepeatedColumnNames(file);

            // A column the expectation does not list reads as DuckDB reads it, or is repeated and refused as such.
            var wanted = new SortedDictionary<string, string>(StringComparer.Ordinal);
            foreach (string column in outcomes.Keys)
            {
                wanted[column] = expected.Columns.TryGetValue(column, out string? listed) ? listed
                    : repeated.Contains(column) ? nameof(NotSupportedException)
                    : MalformedExpectation.SameAsDuckDb;
            }

            Assert.All(expected.Columns.Keys, column => Assert.Contains(column, outcomes.Keys));
            Assert.Equal(Describe(wanted), Describe(outcomes));
        });

    [Theory(Timeout = Timeout)]
    [InlineData("data/datapage_v1-corrupt-checksum.parquet")]
    [InlineData("data/rle-dict-uncompressed-corrupt-checksum.parquet")]
    public Task A_file_with_corrupt_page_checksums_reads_as_DuckDB_reads_it_once_verification_is_off(string file) =>
        Task.Run(() =>
        {
            SortedDictionary<string, string> outcomes = Outcomes(file, new ParquetReadOptions { VerifyPageChecksums = false });
            Assert.NotEmpty(outcomes);
            Assert.All(outcomes, pair => Assert.Equal(MalformedExpectation.SameAsDuckDb, pair.Value));
        });

    [Fact]
    public void A_damaged_schema_giving_a_column_no_physical_type_is_refused_on_open_naming_the_file_and_column()
    {
        // PARQUET-1481: the Thrift of the schema is damaged; ParquetSharp opens it and reports the column's
        // physical type as a number the format does not have.
        string path = ParquetTestingCorpus.PathOf("bad_data/PARQUET-1481.parquet");
        long live = AllocationLedger.LiveCount;
        InvalidDataException error = Assert.Throws<InvalidDataException>(() => new NativeParquetReader(path));
        Assert.Contains(path, error.Message, StringComparison.Ordinal);
        Assert.Contains("column 'Handle'", error.Message, StringComparison.Ordinal);
        Assert.Contains("physical type", error.Message, StringComparison.Ordinal);
        Assert.Equal(live, AllocationLedger.LiveCount);
    }

    [Theory(Timeout = Timeout)]
    [InlineData("data/datapage_v1-corrupt-checksum.parquet", "b", "page 1 of row group 0")]
    [InlineData("data/rle-dict-uncompressed-corrupt-checksum.parquet", "long_field", "page 0 of row group 0")]
    public Task A_page_with_a_corrupt_checksum_is_refused_naming_the_file_column_row_group_and_page(string file, string column, string page) =>
        Task.Run(() =>
        {
            string path = ParquetTestingCorpus.PathOf(file);
            using var reader = new NativeParquetReader(path);
            InvalidDataException error = Assert.Throws<InvalidDataException>(() => CorpusValues.ReadOurs(reader, column));
            Assert.Contains(path, error.Message, StringComparison.Ordinal);
            Assert.Contains($"'{column}'", error.Message, StringComparison.Ordinal);
            Assert.Contains("fails its page checksum at " + page, error.Message, StringComparison.Ordinal);
            Assert.IsType<ParquetSharp.ParquetException>(error.InnerException);
        });

    // Each column's outcome: the exception type's name (its message checked to name the file), or whether
    // the values are DuckDB's (compared row by row) or DuckDB cannot read them.
    private static SortedDictionary<string, string> Outcomes(string file, ParquetReadOptions options)
    {
        string path = ParquetTestingCorpus.PathOf(file);
        var outcomes = new SortedDictionary<string, string>(StringComparer.Ordinal);
        NativeParquetReader reader;
        try
        {
            reader = new NativeParquetReader(path, options);
        }
        catch (Exception e)
        {
            outcomes[MalformedExpectation.Open] = Refused(e, path);
            return outcomes;
        }

        using (reader)
        {
            using var duck = new DuckDb();
            for (int i = 0; i < reader.ColumnCount; i++)
            {
                string column = reader.GetColumnName(i);
                string?[] ours;
                try
                {
                    ours = CorpusValues.ReadOurs(reader, column);
                }
                catch (Exception e)
                {
                    outcomes[column] = Refused(e, path);
                    continue;
                }

                string?[] duckDb;
                try
                {
                    duckDb = CorpusValues.ReadDuckDb(duck, path, column, reader.GetColumnInfo(column));
                }
                catch (DuckDBException)
                {
                    outcomes[column] = MalformedExpectation.SilentRead;
                    continue;
                }

                outcomes[column] = duckDb.SequenceEqual(ours) ? MalformedExpectation.SameAsDuckDb : MalformedExpectation.DiffersFromDuckDb;
            }
        }

        return outcomes;
    }

    // A refusal is of a conventional type and names the file; anything else (ParquetSharp's own
    // exception, a crash's stand-in) fails the case.
    private static string Refused(Exception e, string path)
    {
        Assert.True(
            e is InvalidDataException or NotSupportedException,
            $"'{path}' gave {e.GetType().FullName}, not a conventional exception: {e}");
        Assert.Contains(path, e.Message, StringComparison.Ordinal);
        return e.GetType().Name;
    }

    private static string Describe(IEnumerable<KeyValuePair<string, string>> outcomes) =>
        string.Join(Environment.NewLine, outcomes.OrderBy(pair => pair.Key, StringComparer.Ordinal).Select(pair => $"{pair.Key}: {pair.Value}"));
}
