using ParquetSharp;

namespace jemalloc.Parquet.Tests;

/// <summary>
/// Files and columns a careless or hostile user could give the dictionary column's Parquet read and write:
/// empty and all-null row groups, columns of only nulls whose null rows carry garbage indices, binary values
/// that are not UTF-8, and one large value repeated.
/// </summary>
[Collection(LedgerBalancedAlone.Name)]
public sealed class DictionaryColumnAttackTests : IDisposable
{
    private readonly TempFolder _folder = new();
    private readonly long _live = AllocationLedger.LiveCount;

    public void Dispose()
    {
        _folder.Dispose();
        Assert.Equal(_live, AllocationLedger.LiveCount);
    }

    [Fact]
    public void Row_groups_of_no_rows_and_of_only_nulls_between_others_keep_every_row_in_order()
    {
        string path = _folder.File("groups.parquet");
        string?[][] groups = [["a", null, "b"], [], [null, null], [], ["b", "a", "c"]];
        using (WriterProperties properties = new WriterPropertiesBuilder().Build())
        using (var file = new ParquetFileWriter(path, [new Column<string>("s", LogicalType.String())], properties))
        {
            foreach (string?[] group in groups)
            {
                using RowGroupWriter rowGroup = file.AppendRowGroup();
                using var writer = rowGroup.NextColumn().LogicalWriter<string?>();
                writer.WriteBatch(group);
            }

            file.Close();
        }

        string?[] expected = [.. groups.SelectMany(g => g)];
        using var reader = new NativeParquetReader(path);
        using NativeDictionaryColumn column = reader.ReadDictionaryColumn("s");
        Assert.Equal(expected.Length, column.Length);
        Assert.Equal(expected, Enumerable.Range(0, expected.Length).Select(i => column.GetString(i)));
        Assert.Equal(3, column.Dictionary.Length);
        Assert.Equal(3, column.NullCount);
    }

    [Fact]
    public void A_column_of_only_nulls_whose_null_rows_carry_garbage_indices_writes_and_reads_back_as_only_nulls()
    {
        string path = _folder.File("nulls.parquet");
        using (var builder = new NativeDictionaryColumnBuilder())
        {
            for (int i = 0; i < 1000; i++)
            {
                builder.AppendNull();
            }

            using NativeDictionaryColumn column = builder.Build();
            Assert.Equal(0, column.Dictionary.Length);
            // A null row's index is not used: any value there must neither be refused nor read.
            column.Indices[0] = int.MinValue;
            column.Indices[999] = int.MaxValue;
            new NativeParquetWriter().Add("s", column).Write(path);
        }

        using var reader = new NativeParquetReader(path);
        using NativeDictionaryColumn back = reader.ReadDictionaryColumn("s");
        Assert.Equal(1000, back.Length);
        Assert.Equal(1000, back.NullCount);
        Assert.Equal(0, back.Dictionary.Length);
        Assert.Equal(0, back.CountStartsWith(""u8));
        Assert.Equal(-1, back.IndexOf(""u8));
    }

    [Fact]
    public void Binary_values_that_are_not_UTF8_and_one_large_value_repeated_round_trip_byte_for_byte()
    {
        string path = _folder.File("binary.parquet");
        byte[] large = new byte[3 << 20];
        new Random(7).NextBytes(large);
        byte[][] values = [[0xFF], [0xC3], [0xED, 0xA0, 0x80], [], large, [0x00], large, [0xC3], large];
        using (var builder = new NativeDictionaryColumnBuilder(isUtf8: false))
        {
            foreach (byte[] value in values)
            {
                builder.Append(value);
            }

            using NativeDictionaryColumn column = builder.Build();
            Assert.Equal(6, column.Dictionary.Length);
            new NativeParquetWriter().Add("b", column).Write(path);
        }

        using var reader = new NativeParquetReader(path);
        using NativeDictionaryColumn back = reader.ReadDictionaryColumn("b");
        Assert.False(back.IsUtf8);
        Assert.Equal(6, back.Dictionary.Length);
        for (int row = 0; row < values.Length; row++)
        {
            Assert.Equal(values[row], back.GetBytes(row));
        }

        Assert.Equal(3, back.CountStartsWith(large.AsSpan(0, 100)));
        Assert.Throws<InvalidOperationException>(() => back.GetString(0));
    }
}
