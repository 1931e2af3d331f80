using ParquetSharp;

namespace jemalloc.Parquet.Tests;

/// <summary>Native columns written and read back: every element type, nulls across row groups whose first row is not on a byte of the bitmap, and allocation options honoured.</summary>
public sealed class RoundTripTests : IDisposable
{
    private readonly TempFolder _folder = new();

    public void Dispose() => _folder.Dispose();

    [Fact]
    public void Every_element_type_round_trips_with_nulls_across_unaligned_row_groups()
    {
        const long rows = 10_007;
        string path = _folder.File("all-types.parquet");
        using var validity = new HugeArray<byte>((rows + 7) / 8);
        for (long i = 0; i < rows; i++)
        {
            if (i % 5 != 2)
            {
                validity[i >> 3] |= (byte)(1 << (int)(i & 7));
            }
        }

        using var sb = Filled<sbyte>(rows, i => (sbyte)((i % 256) - 128));
        using var b = Filled<byte>(rows, i => (byte)(i % 256));
        using var sh = Filled<short>(rows, i => (short)((i * 7 % 65536) - 32768));
        using var ush = Filled<ushort>(rows, i => (ushort)(i * 13 % 65536));
        using var i32 = Filled<int>(rows, i => (int)(i * 214_013) - 1_000_000_000);
        using var u32 = Filled<uint>(rows, i => (uint)(i * 2_654_435_761));
        using var i64 = Filled<long>(rows, i => (i * 6_364_136_223_846_793_005L) ^ i);
        using var u64 = Filled<ulong>(rows, i => (ulong)i * 11_400_714_819_323_198_485UL);
        using var f32 = Filled<float>(rows, i => i / 3f);
        using var f64 = Filled<double>(rows, i => i / 7.0);
        using var flags = Filled<bool>(rows, i => i % 3 == 1);
        using var i96 = Filled<Int96>(rows, i => new Int96((int)i, (int)(i * 3), (int)(i * 5)));
        var writer = new NativeParquetWriter { RowGroupSize = 1001, Compression = Compression.Zstd };
        writer.Add("sb", sb, validity).Add("b", b, validity).Add("sh", sh, validity).Add("ush", ush, validity)
            .Add("i32", i32, validity).Add("u32", u32, validity).Add("i64", i64, validity).Add("u64", u64, validity)
            .Add("f32", f32, validity).Add("f64", f64, validity).Add("flags", flags, validity).Add("i96", i96, validity)
            .Add("plain", i64);
        writer.Write(path);

        using var reader = new NativeParquetReader(path);
        Assert.Equal(10, reader.RowGroupCount);
        Assert.Equal(13, reader.ColumnCount);
        Assert.Equal("i96", reader.GetColumnName(11));
        Assert.False(reader.IsNullable("plain"));
        Check(reader, "sb", sb, validity);
        Check(reader, "b", b, validity);
        Check(reader, "sh", sh, validity);
        Check(reader, "ush", ush, validity);
        Check(reader, "i32", i32, validity);
        Check(reader, "u32", u32, validity);
        Check(reader, "i64", i64, validity);
        Check(reader, "u64", u64, validity);
        Check(reader, "f32", f32, validity);
        Check(reader, "f64", f64, validity);
        Check(reader, "flags", flags, validity);
        Check(reader, "i96", i96, validity);
        using HugeArray<long> plain = reader.ReadColumn<long>("plain");
        for (long i = 0; i < rows; i++)
        {
            Assert.Equal(i64[i], plain[i]);
        }

        // A REQUIRED column read as nullable: every row valid, to the last bit of a partial bitmap byte.
        using (NullableColumn<long> required = reader.ReadNullableColumn<long>("plain"))
        {
            Assert.Equal(0, required.NullCount);
            for (long i = 0; i < rows; i++)
            {
                Assert.False(required.IsNull(i));
                Assert.Equal(i64[i], required.Values[i]);
            }
        }

        // Narrow integer columns also read as int, which holds all their values.
        using NullableColumn<int> widened = reader.ReadNullableColumn<int>("sh");
        for (long i = 0; i < rows; i++)
        {
            Assert.Equal(validity[i >> 3] >> (int)(i & 7) & 1, widened.IsNull(i) ? 0 : 1);
            Assert.Equal(widened.IsNull(i) ? 0 : sh[i], widened.Values[i]);
        }
    }

    [Fact]
    public void A_nullable_column_whose_row_groups_mostly_have_no_nulls_reads_every_bit_from_unaligned_starts()
    {
        const long rows = 10_007;
        string path = _folder.File("few-nulls.parquet");
        using var validity = new HugeArray<byte>((rows + 7) / 8, (byte)0xFF);
        long[] nullRows = [3, 1001, 5005, 9000, rows - 1];
        foreach (long row in nullRows)
        {
            validity[row >> 3] &= (byte)~(1 << (int)(row & 7));
        }

        using var values = Filled<int>(rows, i => (int)(i * 7) - 3);
        new NativeParquetWriter { RowGroupSize = 1001 }.Add("v", values, validity).Write(path);

        using var reader = new NativeParquetReader(path);
        using NullableColumn<int> read = reader.ReadNullableColumn<int>("v");
        Assert.Equal(nullRows.Length, read.NullCount);
        for (long i = 0; i < rows; i++)
        {
            bool isNull = Array.IndexOf(nullRows, i) >= 0;
            Assert.True(isNull == read.IsNull(i), $"row {i}");
            Assert.Equal(isNull ? 0 : (int)(i * 7) - 3, read.Values[i]);
        }
    }

    [Fact]
    public void A_column_read_with_an_arenas_options_is_counted_in_that_arena_and_its_budget_refuses_a_bigger_one()
    {
        string path = _folder.File("arena.parquet");
        using var values = new HugeArray<long>(1 << 20, 5L);
        new NativeParquetWriter().Add("v", values).Write(path);
        using var reader = new NativeParquetReader(path);

        using var arena = new JemArena();
        using (HugeArray<long> column = reader.ReadColumn<long>("v", arena.Options))
        {
            Assert.True(arena.UsedBytes >= (8L << 20), $"the arena holds {arena.UsedBytes:N0} bytes");
            Assert.Equal(5L, column[123_456]);
        }

        using var small = new JemArena(budgetBytes: 4L << 20);
        Assert.Throws<ArenaBudgetExceededException>(() => reader.ReadColumn<long>("v", small.Options));
        Assert.Equal(0, small.UsedBytes);
    }

    [Fact]
    public void A_column_read_with_huge_pages_starts_on_a_huge_page_boundary()
    {
        string path = _folder.File("huge.parquet");
        using var values = new HugeArray<double>(1 << 20, 0.5);
        new NativeParquetWriter().Add("v", values).Write(path);
        using var reader = new NativeParquetReader(path);
        using HugeArray<double> column = reader.ReadColumn<double>("v", AllocationOptions.WithHugePages);
        Assert.Equal(0, column.Pointer % (2 << 20));
        Assert.Equal(0.5 * (1 << 20), column.VectorSum());
    }

    private static HugeArray<T> Filled<T>(long rows, Func<long, T> value)
        where T : unmanaged, IEquatable<T>
    {
        var array = new HugeArray<T>(rows);
        for (long i = 0; i < rows; i++)
        {
            array[i] = value(i);
        }

        return array;
    }

    private static void Check<T>(NativeParquetReader reader, string column, HugeArray<T> expected, HugeArray<byte> validity)
        where T : unmanaged, IEquatable<T>
    {
        using NullableColumn<T> read = reader.ReadNullableColumn<T>(column);
        long nulls = 0;
        for (long i = 0; i < expected.Length; i++)
        {
            bool valid = ((validity[i >> 3] >> (int)(i & 7)) & 1) != 0;
            Assert.Equal(!valid, read.IsNull(i));
            Assert.Equal(valid ? expected[i] : default, read.Values[i]);
            nulls += valid ? 0 : 1;
        }

        Assert.Equal(nulls, read.NullCount);
        Assert.True(nulls > 0);
    }
}
