using jemalloc.Tests.Support;

namespace jemalloc.Tests.Columns;

[Collection(LeakChecked.Name)]
public sealed class FixedSizeBinaryColumnTests : LeakCheckedTest
{
    [Fact]
    public void Values_are_copied_and_compared_at_their_rows()
    {
        var data = new HugeArray<byte>(12);
        for (int i = 0; i < 12; i++)
        {
            data[i] = (byte)(i + 1);
        }

        using var column = new FixedSizeBinaryColumn(data, null, 4, 3);
        Assert.Equal(3, column.ByteWidth);
        Assert.Equal(4, column.Length);
        Span<byte> value = stackalloc byte[5];
        column.CopyValue(2, value);
        Assert.Equal(new byte[] { 7, 8, 9, 0, 0 }, value.ToArray());
        Assert.True(column.ValueEquals(3, [10, 11, 12]));
        Assert.False(column.ValueEquals(3, [10, 11, 13]));
        Assert.False(column.ValueEquals(3, [10, 11]));
        Assert.False(column.IsNull(3));
    }

    [Fact]
    public void GetGuid_reads_the_16_bytes_in_RFC_4122_order()
    {
        var expected = Guid.Parse("00112233-4455-6677-8899-aabbccddeeff");
        var data = new HugeArray<byte>(32);
        data.CopyFrom(expected.ToByteArray(bigEndian: true), 16);
        using var column = new FixedSizeBinaryColumn(data, new HugeArray<byte>(1, (byte)0b10), 2, 16);
        Assert.Equal(expected, column.GetGuid(1));
        Assert.Equal(0x00, column.Data[16]);
        Assert.Equal(0xFF, column.Data[31]);
        Assert.True(column.IsNull(0));
        Assert.Equal(1, column.NullCount);
    }

    [Fact]
    public void GetGuid_of_a_column_that_is_not_16_bytes_wide_throws_InvalidOperationException()
    {
        using var column = new FixedSizeBinaryColumn(new HugeArray<byte>(8), null, 1, 8);
        var error = Assert.Throws<InvalidOperationException>(() => column.GetGuid(0));
        Assert.Contains("8", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Wrong_arguments_throw_naming_what_was_wrong()
    {
        using var data = new HugeArray<byte>(10);
        Assert.Equal("byteWidth", Assert.Throws<ArgumentOutOfRangeException>(() => new FixedSizeBinaryColumn(data, null, 1, 0)).ParamName);
        Assert.Equal("length", Assert.Throws<ArgumentOutOfRangeException>(() => new FixedSizeBinaryColumn(data, null, 4, 3)).ParamName);
        Assert.Equal("validity", Assert.Throws<ArgumentException>(() => new FixedSizeBinaryColumn(data, data, 3, 3)).ParamName);
        var column = new FixedSizeBinaryColumn(new HugeArray<byte>(6), null, 2, 3);
        using (column)
        {
            Assert.Equal("destination", Assert.Throws<ArgumentException>(() => column.CopyValue(0, new byte[2])).ParamName);
            Assert.Throws<ArgumentOutOfRangeException>(() => column.CopyValue(2, new byte[3]));
            Assert.Throws<ArgumentOutOfRangeException>(() => column.ValueEquals(-1, new byte[3]));
            Assert.Throws<ArgumentOutOfRangeException>(() => column.IsNull(2));
        }

        Assert.Throws<ObjectDisposedException>(() => column.CopyValue(0, new byte[3]));
        Assert.Throws<ObjectDisposedException>(() => column.ValueEquals(0, new byte[3]));
        Assert.Throws<ObjectDisposedException>(() => column.IsNull(0));
        Assert.True(data.IsValid);
    }

    [Fact]
    public void Dispose_while_the_data_is_leased_frees_nothing_and_throws()
    {
        var column = new FixedSizeBinaryColumn(new HugeArray<byte>(4), new HugeArray<byte>(1, (byte)0xFF), 2, 2);
        using (MemoryLease<byte> lease = column.Data.Lease())
        {
            var error = Assert.Throws<InvalidOperationException>(column.Dispose);
            Assert.Contains("data", error.Message, StringComparison.Ordinal);
            Assert.True(column.Validity!.IsValid);
        }

        column.Dispose();
        Assert.False(column.Data.IsValid);
        Assert.False(column.Validity.IsValid);
    }
}
