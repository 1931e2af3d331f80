#pragma warning disable IDE0011, SA1107, SA1501, SA1503, IDE0022, CA2000
using System.Globalization;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.Columns;

/// <summary>Hostile review 2: DecimalColumn and FixedSizeBinaryColumn at their edges and misused.</summary>
[Collection(LeakChecked.Name)]
public sealed class FlatColumnAttackTests : LeakCheckedTest
{
    [Fact]
    public void Attack_Int128_extremes_format_exactly_at_scale_0_and_38()
    {
        var values = new HugeArray<Int128>(4);
        values[0] = Int128.MaxValue;
        values[1] = Int128.MinValue;
        values[2] = -1;
        values[3] = 0;
        using (var column = new DecimalColumn(values, null, 4, 38, 38))
        {
            Assert.Equal("1.70141183460469231731687303715884105727", column.ToString(0));
            Assert.Equal("-1.70141183460469231731687303715884105728", column.ToString(1));
            Assert.Equal("-0.00000000000000000000000000000000000001", column.ToString(2));
            Assert.Equal("0.00000000000000000000000000000000000000", column.ToString(3));
            Assert.Throws<OverflowException>(() => column.GetDecimal(0));
            Assert.Throws<OverflowException>(() => column.GetDecimal(1));
            Assert.Throws<OverflowException>(() => column.GetDecimal(2));
            Assert.Equal(0m, column.GetDecimal(3));
        }

        values = new HugeArray<Int128>(4);
        values[0] = Int128.MaxValue;
        values[1] = Int128.MinValue;
        values[2] = (Int128.One << 96) - 1;
        values[3] = -((Int128.One << 96) - 1);
        using (var column = new DecimalColumn(values, null, 4, 38, 0))
        {
            Assert.Equal(Int128.MaxValue.ToString(CultureInfo.InvariantCulture), column.ToString(0));
            Assert.Equal(Int128.MinValue.ToString(CultureInfo.InvariantCulture), column.ToString(1));
            Assert.Throws<OverflowException>(() => column.GetDecimal(0));
            Assert.Throws<OverflowException>(() => column.GetDecimal(1));
            Assert.Equal(decimal.MaxValue, column.GetDecimal(2));
            Assert.Equal(decimal.MinValue, column.GetDecimal(3));
        }
    }

    [Fact]
    public void Attack_trailing_zeros_past_28_places_are_dropped_not_an_overflow()
    {
        using var values = new HugeArray<Int128>(1);
        values[0] = Int128.Parse("-50000000000", CultureInfo.InvariantCulture); // -5e10 / 1e38 = -5e-28
        using var column = new DecimalColumn(values, null, 1, 38, 38);
        Assert.Equal(-0.0000000000000000000000000005m, column.GetDecimal(0));
    }

    [Fact]
    public void Attack_constructor_misuse_throws_the_documented_exceptions()
    {
        using var values = new HugeArray<Int128>(3);
        using var bits = new HugeArray<byte>(1, (byte)0xFF);
        Assert.Throws<ArgumentNullException>(() => new DecimalColumn(null!, null, 1, 10, 2));
        Assert.Throws<ArgumentOutOfRangeException>(() => new DecimalColumn(values, null, 4, 10, 2));
        Assert.Throws<ArgumentOutOfRangeException>(() => new DecimalColumn(values, null, -1, 10, 2));
        Assert.Throws<ArgumentOutOfRangeException>(() => new DecimalColumn(values, null, 3, 0, 0));
        Assert.Throws<ArgumentOutOfRangeException>(() => new DecimalColumn(values, null, 3, 39, 0));
        Assert.Throws<ArgumentOutOfRangeException>(() => new DecimalColumn(values, null, 3, 10, 11));
        Assert.Throws<ArgumentOutOfRangeException>(() => new DecimalColumn(values, null, 3, 10, -1));
        using var data = new HugeArray<byte>(48);
        Assert.Throws<ArgumentOutOfRangeException>(() => new FixedSizeBinaryColumn(data, null, 1, 0));
        Assert.Throws<ArgumentOutOfRangeException>(() => new FixedSizeBinaryColumn(data, null, 1, -16));
        Assert.Throws<ArgumentOutOfRangeException>(() => new FixedSizeBinaryColumn(data, null, 4, 16));
        Assert.Throws<ArgumentOutOfRangeException>(() => new FixedSizeBinaryColumn(data, null, long.MaxValue, int.MaxValue));
        Assert.Throws<ArgumentException>(() => new FixedSizeBinaryColumn(data, data, 3, 16));
        using var shortBits = new HugeArray<byte>(1);
        Assert.Throws<ArgumentException>(() => new FixedSizeBinaryColumn(data, shortBits, 9, 1 + 4));
        var gone = new HugeArray<Int128>(2);
        gone.Dispose();
        Assert.Throws<ObjectDisposedException>(() => new DecimalColumn(gone, null, 2, 5, 0));
        _ = bits;
    }

    [Fact]
    public void Attack_reads_after_the_wrapped_arrays_were_disposed_throw_ObjectDisposedException()
    {
        var values = new HugeArray<Int128>(2);
        var validity = new HugeArray<byte>(1, (byte)0xFF);
        var column = new DecimalColumn(values, validity, 2, 5, 1);
        values.Dispose();
        Assert.Throws<ObjectDisposedException>(() => column.GetUnscaled(0));
        Assert.Throws<ObjectDisposedException>(() => column.ToString(0));
        Assert.Throws<ObjectDisposedException>(() => column.GetDecimal(0));
        Assert.Throws<ObjectDisposedException>(() => column.IsNull(0));
        column.Dispose();
        Assert.Throws<ObjectDisposedException>(() => validity[0]);

        var data = new HugeArray<byte>(32);
        var bits = new HugeArray<byte>(1, (byte)0xFF);
        var fixedColumn = new FixedSizeBinaryColumn(data, bits, 2, 16);
        bits.Dispose();
        Assert.Throws<ObjectDisposedException>(() => fixedColumn.IsNull(1));
        data.Dispose();
        Assert.Throws<ObjectDisposedException>(() => fixedColumn.CopyValue(0, new byte[16]));
        Assert.Throws<ObjectDisposedException>(() => fixedColumn.ValueEquals(0, new byte[16]));
        Assert.Throws<ObjectDisposedException>(() => fixedColumn.GetGuid(0));
        fixedColumn.Dispose();
        fixedColumn.Dispose();
    }

    [Fact]
    public void Attack_fixed_binary_rows_and_destinations_out_of_range_throw()
    {
        using var data = new HugeArray<byte>(48);
        using var column = new FixedSizeBinaryColumn(data, null, 3, 16);
        Assert.Throws<ArgumentOutOfRangeException>(() => column.CopyValue(3, new byte[16]));
        Assert.Throws<ArgumentOutOfRangeException>(() => column.CopyValue(-1, new byte[16]));
        Assert.Throws<ArgumentOutOfRangeException>(() => column.ValueEquals(long.MinValue, new byte[16]));
        Assert.Throws<ArgumentException>(() => column.CopyValue(0, new byte[15]));
        Assert.False(column.ValueEquals(0, new byte[17]));
        Assert.True(column.ValueEquals(2, new byte[16]));
        using var odd = new HugeArray<byte>(9);
        using var oddColumn = new FixedSizeBinaryColumn(odd, null, 3, 3);
        Assert.Throws<InvalidOperationException>(() => oddColumn.GetGuid(0));
        using var empty = new FixedSizeBinaryColumn(odd, null, 0, 3);
        Assert.Throws<ArgumentOutOfRangeException>(() => empty.CopyValue(0, new byte[3]));
    }

    [Fact]
    public void Attack_Dispose_while_the_values_are_leased_throws_and_frees_nothing()
    {
        var values = new HugeArray<Int128>(2);
        var column = new DecimalColumn(values, null, 2, 5, 0);
        using (MemoryLease<Int128> lease = values.Lease())
        {
            Assert.Throws<InvalidOperationException>(() => column.Dispose());
        }

        Assert.Equal(Int128.Zero, column.GetUnscaled(1));
        column.Dispose();
    }
}
