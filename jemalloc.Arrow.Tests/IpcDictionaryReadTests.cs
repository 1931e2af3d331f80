namespace jemalloc.Arrow.Tests;

/// <summary>
/// <see cref="ArrowIpcReader.ReadDictionaryColumn(string)"/> on streams built message by message
/// (<see cref="IpcDictionaryStream"/>): indices of every integer type in both byte orders, deltas
/// appended between record batches, null rows and null dictionary values; and every malformed or
/// unsupported arrangement refused with an exception naming the column, with nothing left allocated.
/// Real files (Arrow's integration files, file and stream) are read in <see cref="IpcCorpusByteOrderTests"/>.
/// </summary>
public sealed class IpcDictionaryReadTests : LedgerBalanced
{
    public static TheoryData<int, bool, bool> IndexTypes()
    {
        var data = new TheoryData<int, bool, bool>();
        foreach (int bits in new[] { 8, 16, 32, 64 })
        {
            foreach (bool isSigned in new[] { true, false })
            {
                foreach (bool big in new[] { false, true })
                {
                    data.Add(bits, isSigned, big);
                }
            }
        }

        return data;
    }

    [Theory]
    [MemberData(nameof(IndexTypes))]
    public void Indices_of_every_integer_type_and_byte_order_with_a_delta_between_batches_read_as_their_values(int bits, bool isSigned, bool bigEndian)
    {
        MemoryStream input = new IpcDictionaryStream(bits, isSigned, bigEndian)
            .Dictionary(false, "apple", "", "cherry")
            .Batch([2, null, 0, 1, 2], nullIndex: 99)
            .Dictionary(true, "damson", "élan")
            .Batch([4, 3, null, 0])
            .ToStream();
        using var reader = new ArrowIpcReader(input, ArrowIpcFormat.Stream);
        Assert.Equal(bigEndian, reader.IsBigEndian);
        Assert.True(reader.Fields[0].IsDictionaryEncoded);
        using NativeDictionaryColumn column = reader.ReadDictionaryColumn("d");
        Assert.True(column.IsUtf8);
        Assert.Equal(9, column.Length);
        Assert.Equal(2, column.NullCount);
        Assert.Equal(new string?[] { "cherry", null, "apple", "", "cherry", "élan", "damson", null, "apple" }, Enumerable.Range(0, 9).Select(r => column.GetString(r)));
        Assert.Equal(5, column.Dictionary.Length);
        Assert.Equal(4, column.GetIndex(5));
    }

    [Fact]
    public void A_row_naming_a_null_value_of_the_dictionary_is_a_null_row()
    {
        MemoryStream input = new IpcDictionaryStream(8, true, false).Dictionary(false, "a", null, "c").Batch([0, 1, 2, 1]).ToStream();
        using var reader = new ArrowIpcReader(input);
        using NativeDictionaryColumn column = reader.ReadDictionaryColumn("d");
        Assert.Equal(new string?[] { "a", null, "c", null }, Enumerable.Range(0, 4).Select(r => column.GetString(r)));
        Assert.Equal(2, column.NullCount);
        Assert.Equal(0, column.Dictionary.NullCount);
    }

    [Theory]
    [InlineData(8, true, -1L)]
    [InlineData(8, true, 3L)]
    [InlineData(16, false, 65535L)]
    [InlineData(32, true, -2147483648L)]
    [InlineData(64, false, -1L)] // 2^64 - 1
    [InlineData(64, true, long.MaxValue)]
    public void An_index_outside_the_dictionary_is_invalid_data_naming_the_column_and_row(int bits, bool isSigned, long index)
    {
        MemoryStream input = new IpcDictionaryStream(bits, isSigned, bigEndian: bits == 16).Dictionary(false, "a", "b", "c").Batch([0, 1, index]).ToStream();
        using var reader = new ArrowIpcReader(input);
        InvalidDataException e = Assert.Throws<InvalidDataException>(() => reader.ReadDictionaryColumn("d").Dispose());
        Assert.Contains("Row 2 of column 'd'", e.Message, StringComparison.Ordinal);
        Assert.Contains("dictionary of 3 values", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_batch_naming_a_value_a_later_delta_appends_is_invalid_data()
    {
        MemoryStream input = new IpcDictionaryStream(32, true, false)
            .Dictionary(false, "a", "b")
            .Batch([0, 2])
            .Dictionary(true, "c")
            .Batch([2])
            .ToStream();
        using var reader = new ArrowIpcReader(input);
        InvalidDataException e = Assert.Throws<InvalidDataException>(() => reader.ReadDictionaryColumn("d").Dispose());
        Assert.Contains("Row 1 of column 'd' (record batch 0) has index 2, outside its dictionary of 2 values", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_dictionary_replaced_by_a_later_batch_is_not_supported_naming_the_column()
    {
        MemoryStream input = new IpcDictionaryStream(32, true, false)
            .Dictionary(false, "a", "b")
            .Batch([0, 1])
            .Dictionary(false, "x", "y")
            .Batch([0])
            .ToStream();
        using var reader = new ArrowIpcReader(input);
        NotSupportedException e = Assert.Throws<NotSupportedException>(() => reader.ReadDictionaryColumn("d").Dispose());
        Assert.Contains("'d'", e.Message, StringComparison.Ordinal);
        Assert.Contains("replaced", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Rows_without_their_dictionary_or_before_it_are_invalid_data()
    {
        using (var reader = new ArrowIpcReader(new IpcDictionaryStream(8, true, false).Batch([0]).ToStream()))
        {
            InvalidDataException e = Assert.Throws<InvalidDataException>(() => reader.ReadDictionaryColumn("d").Dispose());
            Assert.Contains("no dictionary batch of that id", e.Message, StringComparison.Ordinal);
        }

        // A dictionary of another id does not count.
        using (var reader = new ArrowIpcReader(new IpcDictionaryStream(8, true, false).Dictionary(3, false, "a").Batch([0]).ToStream()))
        {
            Assert.Throws<InvalidDataException>(() => reader.ReadDictionaryColumn("d").Dispose());
        }

        using (var reader = new ArrowIpcReader(new IpcDictionaryStream(8, true, false).Batch([0]).Dictionary(false, "a").Batch([0]).ToStream()))
        {
            InvalidDataException e = Assert.Throws<InvalidDataException>(() => reader.ReadDictionaryColumn("d").Dispose());
            Assert.Contains("comes after record batch 0", e.Message, StringComparison.Ordinal);
        }
    }

    [Fact]
    public void An_input_without_rows_or_dictionary_gives_an_empty_column()
    {
        using var reader = new ArrowIpcReader(new IpcDictionaryStream(16, false, true).ToStream());
        using NativeDictionaryColumn column = reader.ReadDictionaryColumn("d");
        Assert.Equal(0, column.Length);
        Assert.Equal(0, column.Dictionary.Length);
    }

    [Fact]
    public void The_other_reads_of_a_dictionary_column_and_this_read_of_a_plain_one_are_refused_naming_the_column()
    {
        using (var reader = new ArrowIpcReader(new IpcDictionaryStream(8, true, false).Dictionary(false, "a").Batch([0]).ToStream()))
        {
            ArgumentException strings = Assert.Throws<ArgumentException>(() => reader.ReadStringColumn("d").Dispose());
            Assert.Contains("'d' is dictionary-encoded", strings.Message, StringComparison.Ordinal);
            Assert.Contains("read it with ReadDictionaryColumn", strings.Message, StringComparison.Ordinal);
            Assert.Contains("read it with ReadDictionaryColumn", Assert.Throws<ArgumentException>(() => reader.ReadColumn<sbyte>("d").Dispose()).Message, StringComparison.Ordinal);
        }

        using var ids = new HugeArray<long>(3);
        var plain = new MemoryStream();
        new ArrowIpcWriter().Add("v", ids).Write(plain, ArrowIpcFormat.Stream);
        plain.Position = 0;
        using (var reader = new ArrowIpcReader(plain))
        {
            ArgumentException e = Assert.Throws<ArgumentException>(() => reader.ReadDictionaryColumn("v").Dispose());
            Assert.Equal("column", e.ParamName);
            Assert.Contains("'v' is of type Int64, which ReadDictionaryColumn does not read: read it with ReadColumn<Int64>", e.Message, StringComparison.Ordinal);
        }
    }
}
