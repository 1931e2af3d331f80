namespace jemalloc.Parquet.Tests;

/// <summary>The docs' Parquet examples (regions <c>parquet-simd</c>, <c>parquet-strings</c> and <c>parquet-dictionary</c>), run as printed; the files come from DuckDB, which checks the results.</summary>
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

    [Fact]
    public void The_readme_string_example_filters_a_table_as_DuckDB_does()
    {
        string path = _folder.File("sales.parquet");
        using var duck = new DuckDb();
        duck.Execute($"""
            COPY (SELECT ['Paris', 'Parma', 'Lyon', 'Zürich', 'Oslo', NULL][(i % 6) + 1] AS city, i * 0.5 AS amount
                  FROM range(1000000) r(i))
            TO '{path}' (FORMAT parquet, COMPRESSION zstd)
            """);

        #region example: parquet-strings
        using var reader = new NativeParquetReader(path);
        using NativeStringColumn city = reader.ReadStringColumn("city");   // three native blocks, no string objects
        using var selected = new HugeArray<byte>((city.Length + 7) / 8);   // one bit a row
        long rows = city.SelectStartsWith("Par"u8, selected);              // compares UTF-8 bytes, decodes nothing
        string? first = city.GetString(city.IndexOf("Zürich"));            // decoded only when asked
        #endregion

        Assert.Equal(duck.Scalar<long>($"SELECT count(*) FROM '{path}' WHERE city LIKE 'Par%'"), rows);
        Assert.Equal("Zürich", first);
        Assert.Equal(3, city.IndexOf("Zürich"));
        Assert.Equal(duck.Scalar<long>($"SELECT count(*) - count(city) FROM '{path}'"), city.NullCount);
        Assert.Equal(1, selected[0] & 1);
        Assert.Equal(0, selected[0] & 4);
    }

    [Fact]
    public void The_dictionary_example_counts_and_groups_a_table_as_DuckDB_does()
    {
        string path = _folder.File("people.parquet");
        using var duck = new DuckDb();
        duck.Execute($"""
            COPY (SELECT ['France', 'Finland', 'Germany', 'Fr', NULL][(i % 5) + 1] AS country FROM range(100000) r(i))
            TO '{path}' (FORMAT parquet, COMPRESSION zstd)
            """);

        #region example: parquet-dictionary
        using var reader = new NativeParquetReader(path);
        using NativeDictionaryColumn country = reader.ReadDictionaryColumn("country"); // an index a row, each value once
        long french = country.CountStartsWith("Fr"u8);     // the prefix is tested once per distinct value
        int index = country.GetIndex(0);                   // group by index: no hashing, no bytes compared
        using NativeStringColumn plain = country.ToStringColumn();   // the plain layout, when it is wanted
        #endregion

        Assert.Equal(duck.Scalar<long>($"SELECT count(*) FROM '{path}' WHERE starts_with(country, 'Fr')"), french);
        Assert.Equal(4, country.Dictionary.Length);
        Assert.Equal("France", country.Dictionary.GetString(index));
        Assert.Equal(country.NullCount, plain.NullCount);
        Assert.Equal("Germany", plain.GetString(2));
    }
}
