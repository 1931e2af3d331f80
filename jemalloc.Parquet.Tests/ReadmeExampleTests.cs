namespace jemalloc.Parquet.Tests;

/// <summary>The docs' Parquet-to-SIMD example (region <c>parquet-simd</c>), run as printed; the file comes from DuckDB, which checks the sums.</summary>
public sealed class ReadmeExampleTests : IDisposable
{
    private readonly TempFolder _folder = new();

    public void Dispose() => _folder.Dispose();

    [Fact]
    public void The_readme_example_sums_a_parquet_column_with_SIMD_as_DuckDB_does()
    {
        string path = _folder.File("trades.parquet");
        using var duck = new DuckDb();
        duck.Execute($"COPY (SELECT i::DOUBLE / 4 AS price, i % 1000 AS qty FROM range(3000000) r(i)) TO '{path}' (FORMAT parquet, COMPRESSION zstd)");
        double expected = duck.Scalar<double>($"SELECT sum(price) FROM read_parquet('{path}')");

        string output = _folder.File("priced.parquet");

        #region example: parquet-simd
        using var reader = new NativeParquetReader(path);
        using HugeArray<double> price = reader.ReadColumn<double>("price", AllocationOptions.WithHugePages);
        price.VectorMultiply(1.1);                 // SIMD over native memory, in place
        double total = price.ParallelVectorSum();  // all cores, no managed array, no GC
        new NativeParquetWriter { Compression = ParquetSharp.Compression.Zstd }
            .Add("price", price)
            .Write(output);
        #endregion

        Assert.Equal(expected * 1.1, total, 1e-9 * expected);
        Assert.Equal(total, duck.Scalar<double>($"SELECT sum(price) FROM read_parquet('{output}')"), 1e-9 * total);
    }
}
