using ParquetSharp;

namespace jemalloc.Parquet.Tests;

/// <summary>Files written from native columns, read back by DuckDB's own Parquet reader.</summary>
public sealed class WrittenForDuckDbTests : IDisposable
{
    private const long Rows = 100_003;
    private readonly TempFolder _folder = new();

    public void Dispose() => _folder.Dispose();

    // The text of row i's string, or null where the row is null: ASCII, and multi-byte UTF-8 every 13th row.
    private static string? TextOf(long i) => i % 11 == 0 ? null : i % 13 == 0 ? $"ünïcødé-€-{i}" : $"row-{i}";

    [Theory]
    [InlineData(Compression.Zstd)]
    [InlineData(Compression.Snappy)]
    [InlineData(Compression.Gzip)]
    [InlineData(Compression.Uncompressed)]
    public void DuckDB_reads_native_columns_with_the_sums_counts_null_counts_and_types_they_hold(Compression compression)
    {
        string path = _folder.File($"native-{compression}.parquet");
        using var id = new HugeArray<long>(Rows);
        using var half = new HugeArray<double>(Rows);
        using var small = new SafeArray<int>((int)Rows);
        using var sparse = new HugeArray<float>(Rows);
        using var sparseValid = new HugeArray<byte>((Rows + 7) / 8);
        using var shorts = new HugeArray<short>(Rows);
        using var flags = new HugeArray<bool>(Rows);
        using var unsigned = new HugeArray<uint>(Rows);
        using var bytes = new HugeArray<byte>(Rows);
        using var store = new Utf8StringStore();
        using var text = new HugeArray<StoredUtf8String>(Rows);
        for (long i = 0; i < Rows; i++)
        {
            id[i] = (i * 3) - 7;
            half[i] = i * 0.5;
            small[(int)i] = (int)(i % 1000) - 500;
            bool valid = i % 7 != 0;
            // A null row's value is garbage on purpose: it must not be written.
            sparse[i] = valid ? i % 97 : 12345f;
            if (valid)
            {
                sparseValid[i >> 3] |= (byte)(1 << (int)(i & 7));
            }

            shorts[i] = (short)((i % 30000) - 15000);
            flags[i] = i % 3 == 0;
            unsigned[i] = (uint)i * 40000u;
            bytes[i] = (byte)(i % 256);
            string? s = TextOf(i);
            text[i] = s is null ? default : store.Add(s);
        }

        new NativeParquetWriter { Compression = compression, RowGroupSize = 10_000 }
            .Add("id", id)
            .Add("half", half)
            .Add("small", small)
            .Add("sparse", sparse, sparseValid)
            .Add("shorts", shorts)
            .Add("flags", flags)
            .Add("unsigned", unsigned)
            .Add("bytes", bytes)
            .AddStrings("text", text)
            .Write(path);

        // The expected figures, from the generating formulas (not from the columns).
        long expectedIdSum = 0, expectedSmallSum = 0, expectedShortSum = 0, expectedFlags = 0, expectedUnsignedSum = 0, expectedByteSum = 0;
        long expectedSparseCount = 0, expectedTextCount = 0, expectedTextBytes = 0;
        double expectedHalfSum = 0, expectedSparseSum = 0;
        for (long i = 0; i < Rows; i++)
        {
            expectedIdSum += (i * 3) - 7;
            expectedHalfSum += i * 0.5;
            expectedSmallSum += (i % 1000) - 500;
            if (i % 7 != 0)
            {
                expectedSparseCount++;
                expectedSparseSum += i % 97;
            }

            expectedShortSum += (i % 30000) - 15000;
            expectedFlags += i % 3 == 0 ? 1 : 0;
            expectedUnsignedSum += (uint)i * 40000u;
            expectedByteSum += i % 256;
            if (TextOf(i) is string s)
            {
                expectedTextCount++;
                expectedTextBytes += System.Text.Encoding.UTF8.GetByteCount(s);
            }
        }

        using var duck = new DuckDb();
        string file = $"read_parquet('{path}')";
        Assert.Equal(Rows, duck.Scalar<long>($"SELECT count(*) FROM {file}"));
        Assert.Equal(expectedIdSum, duck.Scalar<long>($"SELECT sum(id)::BIGINT FROM {file}"));
        Assert.Equal(expectedHalfSum, duck.Scalar<double>($"SELECT sum(half) FROM {file}"));
        Assert.Equal(expectedSmallSum, duck.Scalar<long>($"SELECT sum(small)::BIGINT FROM {file}"));
        Assert.Equal(expectedSparseCount, duck.Scalar<long>($"SELECT count(sparse) FROM {file}"));
        Assert.Equal(Rows - expectedSparseCount, duck.Scalar<long>($"SELECT count(*) FILTER (WHERE sparse IS NULL) FROM {file}"));
        Assert.Equal(expectedSparseSum, duck.Scalar<double>($"SELECT sum(sparse)::DOUBLE FROM {file}"));
        Assert.Equal(expectedShortSum, duck.Scalar<long>($"SELECT sum(shorts)::BIGINT FROM {file}"));
        Assert.Equal(expectedFlags, duck.Scalar<long>($"SELECT count_if(flags)::BIGINT FROM {file}"));
        Assert.Equal(expectedUnsignedSum, duck.Scalar<long>($"SELECT sum(unsigned)::BIGINT FROM {file}"));
        Assert.Equal(expectedByteSum, duck.Scalar<long>($"SELECT sum(bytes)::BIGINT FROM {file}"));
        Assert.Equal(expectedTextCount, duck.Scalar<long>($"SELECT count(text) FROM {file}"));
        Assert.Equal(expectedTextBytes, duck.Scalar<long>($"SELECT sum(octet_length(encode(text)))::BIGINT FROM {file}"));
        Assert.Equal(TextOf(13 * 17), duck.Scalar<string>($"SELECT text FROM {file} WHERE id = {(13 * 17 * 3) - 7}"));
        Assert.Equal(TextOf(100_002), duck.Scalar<string>($"SELECT text FROM {file} WHERE id = {(100_002 * 3) - 7}"));
        Assert.Null(TextOf(100_001));
        Assert.True(duck.Scalar<bool>($"SELECT text IS NULL FROM {file} WHERE id = {(100_001 * 3) - 7}"));

        // The logical types say each column's width and sign; row groups and codec are as asked.
        Assert.Equal("BIGINT|DOUBLE|INTEGER|FLOAT|SMALLINT|BOOLEAN|UINTEGER|UTINYINT|VARCHAR", duck.Scalar<string>(
            $"SELECT concat_ws('|', typeof(id), typeof(half), typeof(small), typeof(sparse), typeof(shorts), typeof(flags), typeof(unsigned), typeof(bytes), typeof(text)) FROM {file} LIMIT 1"));
        Assert.Equal(11L, duck.Scalar<long>($"SELECT count(DISTINCT row_group_id) FROM parquet_metadata('{path}')"));
        Assert.Equal(compression.ToString().ToUpperInvariant(), duck.Scalar<string>($"SELECT string_agg(DISTINCT compression, ',') FROM parquet_metadata('{path}')"));
    }
}
