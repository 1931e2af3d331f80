using System.Globalization;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.Columns;

[Collection(LeakChecked.Name)]
public sealed class DecimalColumnTests : LeakCheckedTest
{
    private static readonly Int128 TenPow38 = Int128.Parse("100000000000000000000000000000000000000", CultureInfo.InvariantCulture);

    [Fact]
    public void Values_nulls_and_counts_come_from_the_arrays_it_wraps()
    {
        var values = new HugeArray<Int128>(10);
        var validity = new HugeArray<byte>(2, (byte)0xFF);
        validity[0] = 0b1111_1010; // rows 0 and 2 null
        validity[1] = 0b1111_1101; // row 9 null; bits past row 9 are not the column's
        for (int i = 0; i < 10; i++)
        {
            values[i] = i * 1001 - 3000;
        }

        using var column = new DecimalColumn(values, validity, 10, 9, 3);
        Assert.Equal(10, column.Length);
        Assert.Equal(3, column.NullCount);
        Assert.Equal(9, column.Precision);
        Assert.Equal(3, column.Scale);
        Assert.True(column.IsNull(0));
        Assert.False(column.IsNull(1));
        Assert.True(column.IsNull(2));
        Assert.True(column.IsNull(9));
        Assert.Equal((Int128)(-1999), column.GetUnscaled(1));
        Assert.Equal(-1.999m, column.GetDecimal(1));
        Assert.Equal("-1.999", column.ToString(1));
        Assert.Equal("6.009", column.ToString(9));
    }

    [Fact]
    public void A_column_without_a_bitmap_has_no_nulls()
    {
        using var column = new DecimalColumn(new HugeArray<Int128>(3, Int128.One), null, 3, 1, 0);
        Assert.Equal(0, column.NullCount);
        Assert.Null(column.Validity);
        Assert.False(column.IsNull(2));
        Assert.Equal(1m, column.GetDecimal(2));
    }

    [Theory]
    [InlineData("0", 0, "0")]
    [InlineData("5", 4, "0.0005")]
    [InlineData("-5", 4, "-0.0005")]
    [InlineData("-12345", 2, "-123.45")]
    [InlineData("99999999999999999999999999999999999999", 10, "9999999999999999999999999999.9999999999")]
    [InlineData("-99999999999999999999999999999999999999", 38, "-0.99999999999999999999999999999999999999")]
    [InlineData("-170141183460469231731687303715884105728", 0, "-170141183460469231731687303715884105728")]
    public void ToString_is_exact_for_any_precision_and_scale(string unscaled, int scale, string expected)
    {
        using var column = new DecimalColumn(new HugeArray<Int128>(1, Int128.Parse(unscaled, CultureInfo.InvariantCulture)), null, 1, 38, scale);
        Assert.Equal(expected, column.ToString(0));
    }

    [Theory]
    [InlineData("79228162514264337593543950335", 0, "79228162514264337593543950335")] // 2^96 - 1: the largest decimal
    [InlineData("-79228162514264337593543950335", 28, "-7.9228162514264337593543950335")]
    [InlineData("1230000000000", 38, "0.0000000000000000000000000123")] // scale 38, trailing zeros dropped
    [InlineData("-42", 2, "-0.42")]
    public void GetDecimal_is_exact_where_a_decimal_holds_the_value(string unscaled, int scale, string expected)
    {
        using var column = new DecimalColumn(new HugeArray<Int128>(1, Int128.Parse(unscaled, CultureInfo.InvariantCulture)), null, 1, 38, scale);
        decimal value = column.GetDecimal(0);
        Assert.Equal(decimal.Parse(expected, CultureInfo.InvariantCulture), value);
        Assert.Equal(expected, value.ToString(CultureInfo.InvariantCulture));
    }

    [Theory]
    [InlineData("79228162514264337593543950336", 0)] // 2^96
    [InlineData("-99999999999999999999999999999999999999", 10)]
    [InlineData("1", 29)] // 29 places with no trailing zero
    [InlineData("-170141183460469231731687303715884105728", 0)] // Int128.MinValue
    public void GetDecimal_throws_OverflowException_naming_the_row_and_value_when_a_decimal_cannot_hold_it(string unscaled, int scale)
    {
        var values = new HugeArray<Int128>(4);
        values[3] = Int128.Parse(unscaled, CultureInfo.InvariantCulture);
        using var column = new DecimalColumn(values, null, 4, 38, scale);
        var error = Assert.Throws<OverflowException>(() => column.GetDecimal(3));
        Assert.Contains("Row 3", error.Message, StringComparison.Ordinal);
        Assert.Contains(column.ToString(3), error.Message, StringComparison.Ordinal);
        Assert.Equal(0m, column.GetDecimal(0));
    }

    [Theory]
    [InlineData(-1L)]
    [InlineData(5L)]
    [InlineData(long.MaxValue)]
    public void A_row_outside_the_column_throws_even_where_the_array_has_elements(long row)
    {
        // The arrays hold 8 elements; the column has 5 rows.
        using var column = new DecimalColumn(new HugeArray<Int128>(8), new HugeArray<byte>(1, (byte)0xFF), 5, 10, 2);
        Assert.Throws<ArgumentOutOfRangeException>(() => column.IsNull(row));
        Assert.Throws<ArgumentOutOfRangeException>(() => column.GetUnscaled(row));
        Assert.Throws<ArgumentOutOfRangeException>(() => column.GetDecimal(row));
        Assert.Throws<ArgumentOutOfRangeException>(() => column.ToString(row));
    }

    [Fact]
    public void A_column_of_no_rows_lies_over_one_element_arrays()
    {
        using var column = new DecimalColumn(new HugeArray<Int128>(1), new HugeArray<byte>(1), 0, 5, 0);
        Assert.Equal(0, column.Length);
        Assert.Equal(0, column.NullCount);
        Assert.Throws<ArgumentOutOfRangeException>(() => column.GetUnscaled(0));
    }

    [Theory]
    [InlineData(0, 0)]
    [InlineData(39, 0)]
    [InlineData(10, -1)]
    [InlineData(10, 11)]
    public void A_precision_or_scale_out_of_range_throws_and_the_arrays_stay_the_callers(int precision, int scale)
    {
        using var values = new HugeArray<Int128>(2);
        var error = Assert.Throws<ArgumentOutOfRangeException>(() => new DecimalColumn(values, null, 2, precision, scale));
        Assert.Equal(precision is < 1 or > 38 ? "precision" : "scale", error.ParamName);
        Assert.True(values.IsValid);
    }

    [Fact]
    public void Wrong_arrays_throw_ArgumentException_naming_what_was_wrong()
    {
        using var values = new HugeArray<Int128>(20);
        using var shortBitmap = new HugeArray<byte>(2);
        Assert.Equal("length", Assert.Throws<ArgumentOutOfRangeException>(() => new DecimalColumn(values, null, 21, 5, 0)).ParamName);
        Assert.Equal("length", Assert.Throws<ArgumentOutOfRangeException>(() => new DecimalColumn(values, null, -1, 5, 0)).ParamName);
        var error = Assert.Throws<ArgumentException>(() => new DecimalColumn(values, shortBitmap, 20, 5, 0));
        Assert.Equal("validity", error.ParamName);
        Assert.Contains("3", error.Message, StringComparison.Ordinal);
        Assert.Throws<ArgumentNullException>(() => new DecimalColumn(null!, null, 0, 5, 0));
    }

    [Fact]
    public void Dispose_frees_both_arrays_and_every_later_read_throws_ObjectDisposedException()
    {
        var values = new HugeArray<Int128>(4);
        var validity = new HugeArray<byte>(1, (byte)0xFF);
        var column = new DecimalColumn(values, validity, 4, 5, 1);
        column.Dispose();
        Assert.False(values.IsValid);
        Assert.False(validity.IsValid);
        Assert.Throws<ObjectDisposedException>(() => column.GetUnscaled(0));
        Assert.Throws<ObjectDisposedException>(() => column.GetDecimal(0));
        Assert.Throws<ObjectDisposedException>(() => column.ToString(0));
        Assert.Throws<ObjectDisposedException>(() => column.IsNull(0));
        column.Dispose();
    }

    [Fact]
    public void Dispose_under_a_lease_of_either_array_frees_nothing_and_throws()
    {
        var column = new DecimalColumn(new HugeArray<Int128>(4), new HugeArray<byte>(1, (byte)0xFF), 4, 5, 1);
        using (MemoryLease<byte> lease = column.Validity!.Lease())
        {
            var error = Assert.Throws<InvalidOperationException>(column.Dispose);
            Assert.Contains("validity bitmap", error.Message, StringComparison.Ordinal);
            Assert.True(column.Values.IsValid);
            Assert.True(column.Validity.IsValid);
        }

        using (MemoryHold hold = column.Values.Hold())
        {
            Assert.Throws<InvalidOperationException>(column.Dispose);
            Assert.True(column.Validity.IsValid);
        }

        column.Dispose();
        Assert.False(column.Values.IsValid);
    }

    [Fact]
    public void Ten_to_the_38_is_past_the_precision_but_its_text_is_still_exact()
    {
        using var column = new DecimalColumn(new HugeArray<Int128>(1, TenPow38), null, 1, 38, 0);
        Assert.Equal("100000000000000000000000000000000000000", column.ToString(0));
    }
}
