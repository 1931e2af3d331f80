using ParquetSharp;

namespace jemalloc.Parquet.Tests;

/// <summary>
/// Apache parquet-testing's files, vendored in Corpus/parquet-testing (its README.md names the commit,
/// the licence and every file's outcome), and what the tests expect of each.
/// </summary>
internal static class ParquetTestingCorpus
{
    /// <summary>Where the files are copied beside the tests.</summary>
    public static string Root { get; } = Path.Combine(AppContext.BaseDirectory, "Corpus", "parquet-testing");

    /// <summary>
    /// Files that are damaged or forged on purpose: <see cref="MalformedCorpusTests"/> reads them, with
    /// what it expects of each; every other file of data/ is well formed and <see cref="CorpusColumnTests"/>
    /// compares its columns with DuckDB's reading.
    /// </summary>
    public static IReadOnlyDictionary<string, MalformedExpectation> Malformed { get; } = new Dictionary<string, MalformedExpectation>(StringComparer.Ordinal)
    {
        ["bad_data/ARROW-GH-41317.parquet"] = new(
            "a column chunk holds fewer values than its row group's rows (arrow#41317)",
            new Dictionary<string, string> { ["timestamp_us_no_tz"] = nameof(InvalidDataException) }),
        ["bad_data/ARROW-GH-41321.parquet"] = new(
            "pages whose decoded levels are fewer than their headers' value counts (arrow#41321)",
            new Dictionary<string, string> { ["int64"] = nameof(InvalidDataException), ["large_binary"] = nameof(InvalidDataException) }),
        ["bad_data/ARROW-GH-43605.parquet"] = new(
            "a dictionary index page that is RLE with a bit width of 0 (arrow#43605): read, as DuckDB reads it",
            new Dictionary<string, string>()),
        ["bad_data/ARROW-GH-45185.parquet"] = new(
            "repetition levels that start with 1 (arrow#45185): its only column is a list",
            new Dictionary<string, string>()),
        ["bad_data/ARROW-GH-47662.parquet"] = new(
            "a REQUIRED FIXED_LEN_BYTE_ARRAY column with nulls in its pages (arrow#47662)",
            new Dictionary<string, string> { ["flba_field"] = nameof(InvalidDataException) }),
        ["bad_data/ARROW-RS-GH-6229-DICTHEADER.parquet"] = new(
            "a dictionary page header with a negative value count (arrow-rs#6229)",
            new Dictionary<string, string>
            {
                ["comment_col"] = nameof(InvalidDataException),
                ["name"] = nameof(InvalidDataException),
                ["nation_key"] = nameof(InvalidDataException),
                ["region_key"] = nameof(InvalidDataException),
            }),
        ["bad_data/ARROW-RS-GH-6229-LEVELS.parquet"] = new(
            "a page with too few repetition levels (arrow-rs#6229): its only column is in a list",
            new Dictionary<string, string>()),
        ["bad_data/PARQUET-1481.parquet"] = new(
            "a schema whose Thrift is damaged: a column's physical type is none the format has (PARQUET-1481)",
            new Dictionary<string, string> { [MalformedExpectation.Open] = nameof(InvalidDataException) }),
        ["data/datapage_v1-corrupt-checksum.parquet"] = new(
            "v1 data pages whose CRC does not match their bytes: refused with checksums verified (the default)",
            new Dictionary<string, string> { ["a"] = nameof(InvalidDataException), ["b"] = nameof(InvalidDataException) }),
        ["data/rle-dict-uncompressed-corrupt-checksum.parquet"] = new(
            "dictionary and v2 data pages whose CRC does not match their bytes: refused with checksums verified (the default)",
            new Dictionary<string, string> { ["binary_field"] = nameof(InvalidDataException), ["long_field"] = nameof(InvalidDataException) }),
        ["data/nation.dict-malformed.parquet"] = new(
            "a malformed dictionary page (kept by parquet-testing as a reader's regression case): read, as DuckDB reads it",
            new Dictionary<string, string>()),
        ["data/repeated_no_annotation.parquet"] = new(
            "a footer declaring 0 rows over a row group of 6 (DuckDB reads the 6): its flat column is refused rather than read against a footer that contradicts itself",
            new Dictionary<string, string> { ["id"] = nameof(InvalidDataException) }),
    };

    /// <summary>
    /// Well-formed files ("file") or columns ("file|column") DuckDB cannot read, each with a file or column
    /// of the same values that DuckDB reads (the same data without the codec or encoding DuckDB lacks),
    /// against which our reading is compared instead.
    /// </summary>
    public static IReadOnlyDictionary<string, string> DuckDbTwins { get; } = new Dictionary<string, string>(StringComparer.Ordinal)
    {
        // Hadoop's framed LZ4 and the older unframed LZ4 (codec LZ4, deprecated): DuckDB reads only LZ4_RAW.
        ["data/hadoop_lz4_compressed.parquet"] = "data/lz4_raw_compressed.parquet",
        ["data/non_hadoop_lz4_compressed.parquet"] = "data/lz4_raw_compressed.parquet",
        ["data/hadoop_lz4_compressed_larger.parquet"] = "data/lz4_raw_compressed_larger.parquet",

        // BYTE_STREAM_SPLIT on INT32, INT64 and FIXED_LEN_BYTE_ARRAY (format 2.11): DuckDB decodes it only
        // for FLOAT and DOUBLE. The file holds each column's values PLAIN-encoded beside it.
        ["data/byte_stream_split_extended.gzip.parquet|float16_byte_stream_split"] = "data/byte_stream_split_extended.gzip.parquet|float16_plain",
        ["data/byte_stream_split_extended.gzip.parquet|int32_byte_stream_split"] = "data/byte_stream_split_extended.gzip.parquet|int32_plain",
        ["data/byte_stream_split_extended.gzip.parquet|int64_byte_stream_split"] = "data/byte_stream_split_extended.gzip.parquet|int64_plain",
        ["data/byte_stream_split_extended.gzip.parquet|flba5_byte_stream_split"] = "data/byte_stream_split_extended.gzip.parquet|flba5_plain",
        ["data/byte_stream_split_extended.gzip.parquet|decimal_byte_stream_split"] = "data/byte_stream_split_extended.gzip.parquet|decimal_plain",
    };

    /// <summary>
    /// Columns DuckDB reads otherwise than the file's own description says (by "file|column"): ours are
    /// compared with the values the description gives, and DuckDB's reading is checked still to differ.
    /// </summary>
    public static IReadOnlyDictionary<string, string?[]> OwnExpectations { get; } = new Dictionary<string, string?[]>(StringComparer.Ordinal)
    {
        // data/int96_from_spark.md: the microseconds Spark wrote, the last stored wrapped (it is past the
        // range of 64-bit nanoseconds); DuckDB reads that one as another instant.
        ["data/int96_from_spark.parquet|a"] = ["1704141296123456", "1704070800000000", "253402225200000000", "1735599600000000", null, "9089380393200000000"],
    };

    /// <summary>The file and column whose DuckDB reading <paramref name="column"/> of <paramref name="file"/> is compared with: its twin, or itself.</summary>
    public static (string File, string Column) CheckedAgainst(string file, string column)
    {
        if (DuckDbTwins.TryGetValue($"{file}|{column}", out string? twin))
        {
            string[] parts = twin.Split('|');
            return (parts[0], parts[1]);
        }

        return (DuckDbTwins.TryGetValue(file, out string? twinFile) ? twinFile : file, column);
    }

    /// <summary>The full path of a file named relative to the corpus root ("data/x.parquet").</summary>
    public static string PathOf(string file) => Path.Combine(Root, file);

    /// <summary>Every well-formed file's columns that are not repeated (top-level columns and fields of structs), as (file, column).</summary>
    public static TheoryData<string, string> FlatColumns() => Columns(repeated: false);

    /// <summary>Every well-formed file's repeated columns (in lists and maps), as (file, column).</summary>
    public static TheoryData<string, string> RepeatedColumns() => Columns(repeated: true);

    /// <summary>Every malformed file.</summary>
    public static TheoryData<string> MalformedFiles()
    {
        var data = new TheoryData<string>();
        foreach (string file in Malformed.Keys.Order(StringComparer.Ordinal))
        {
            data.Add(file);
        }

        return data;
    }

    /// <summary>The names of a file's repeated columns (in lists and maps), as ParquetSharp's own reader gives them.</summary>
    public static HashSet<string> RepeatedColumnNames(string file)
    {
        var names = new HashSet<string>(StringComparer.Ordinal);
        using var reader = new ParquetFileReader(PathOf(file));
        using FileMetaData metadata = reader.FileMetaData;
        SchemaDescriptor schema = metadata.Schema;
        for (int i = 0; i < schema.NumColumns; i++)
        {
            ColumnDescriptor column = schema.Column(i);
            using ParquetSharp.Schema.ColumnPath path = column.Path;
            if (column.MaxRepetitionLevel > 0)
            {
                names.Add(path.ToDotString());
            }
        }

        return names;
    }

    /// <summary>Every .parquet file of the corpus, relative to its root.</summary>
    public static IEnumerable<string> AllFiles() =>
        Directory.EnumerateFiles(Root, "*.parquet", SearchOption.AllDirectories)
            .Select(path => Path.GetRelativePath(Root, path).Replace('\\', '/'))
            .Order(StringComparer.Ordinal);

    private static TheoryData<string, string> Columns(bool repeated)
    {
        var data = new TheoryData<string, string>();
        foreach (string file in AllFiles().Where(f => !Malformed.ContainsKey(f)))
        {
            // ParquetSharp's own reader, not ours: the list of cases must not depend on the code under test.
            using var reader = new ParquetFileReader(PathOf(file));
            using FileMetaData metadata = reader.FileMetaData;
            SchemaDescriptor schema = metadata.Schema;
            for (int i = 0; i < schema.NumColumns; i++)
            {
                ColumnDescriptor column = schema.Column(i);
                using ParquetSharp.Schema.ColumnPath path = column.Path;
                if ((column.MaxRepetitionLevel > 0) == repeated)
                {
                    data.Add(file, path.ToDotString());
                }
            }
        }

        return data;
    }
}
