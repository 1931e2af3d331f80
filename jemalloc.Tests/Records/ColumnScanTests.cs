using jemalloc.Tests.Support;

namespace jemalloc.Tests.Records;

[Collection(LeakChecked.Name)]
public sealed class ColumnScanTests : LeakCheckedTest
{
    [Theory]
    [InlineData(0)]
    [InlineData(3)]
    [InlineData(4)]
    [InlineData(17)]
    [InlineData(10_001)]
    public void Finds_exactly_the_positions_a_scalar_loop_finds(int length)
    {
        var random = new Random(length);
        double[] column = [.. Enumerable.Range(0, length).Select(_ => random.Next(10) == 0 ? double.NaN : Math.Round(random.NextDouble(), 2))];
        int[] expected = [.. Enumerable.Range(0, length).Where(i => column[i] >= 0.25 && column[i] <= 0.5)];
        int[] matches = new int[length];
        int count = ColumnScan.FindInRange(column, 0.25, 0.5, matches);
        Assert.Equal(expected, matches[..count]);
        Assert.Equal(expected.Length, ColumnScan.CountInRange(column, 0.25, 0.5));
    }

    [Fact]
    public void Scans_a_range_of_a_huge_array_with_relative_positions()
    {
        using var column = new HugeArray<double>(100);
        for (int i = 0; i < 100; i++)
        {
            column[i] = i;
        }

        int[] matches = new int[30];
        int count = ColumnScan.FindInRange(column, 50, 30, 55.0, 61.5, matches);
        Assert.Equal([5, 6, 7, 8, 9, 10, 11], matches[..count]);
        Assert.Equal(0, column.Handle.LeaseCount);
    }

    [Fact]
    public void Infinite_bounds_signed_zeros_and_NaN_elements_follow_IEEE_comparison()
    {
        double[] column = [double.NaN, double.NegativeInfinity, -0.0, 0.0, double.PositiveInfinity, double.Epsilon, -double.Epsilon, double.MaxValue, double.NaN];
        int[] matches = new int[column.Length];
        int count = ColumnScan.FindInRange(column, double.NegativeInfinity, double.PositiveInfinity, matches);
        Assert.Equal([1, 2, 3, 4, 5, 6, 7], matches[..count]);
        Assert.Equal(7, ColumnScan.CountInRange(column, double.NegativeInfinity, double.PositiveInfinity));
        count = ColumnScan.FindInRange(column, 0.0, -0.0, matches);
        Assert.Equal([2, 3], matches[..count]);
        count = ColumnScan.FindInRange(column, double.PositiveInfinity, double.PositiveInfinity, matches);
        Assert.Equal([4], matches[..count]);
        Assert.Equal(0, ColumnScan.FindInRange([], 0, 1, []));
        Assert.Equal(0, ColumnScan.CountInRange([], 0, 1));
        Assert.Equal(0, ColumnScan.CountInRange([double.NaN, double.NaN, double.NaN, double.NaN, double.NaN], double.MinValue, double.MaxValue));
        Assert.Throws<ArgumentOutOfRangeException>(() => ColumnScan.CountInRange(column, double.PositiveInfinity, double.NegativeInfinity));
    }

    [Fact]
    public void A_range_whose_end_overflows_is_refused()
    {
        using var huge = new HugeArray<double>(10);
        Assert.Throws<ArgumentOutOfRangeException>(() => ColumnScan.FindInRange(huge, long.MaxValue, 1, 0, 1, new int[1]));
        Assert.Throws<ArgumentOutOfRangeException>(() => ColumnScan.FindInRange(huge, 9, int.MaxValue, 0, 1, new int[1]));
        Assert.Throws<ArgumentOutOfRangeException>(() => ColumnScan.FindInRange(huge, 0, -1, 0, 1, new int[1]));
        Assert.Equal(0, ColumnScan.FindInRange(huge, 10, 0, 0, 1, []));
        Assert.Equal(0, huge.Handle.LeaseCount);
    }

    [Fact]
    public void Bad_arguments_throw()
    {
        double[] column = [1, 2, 3];
        Assert.Throws<ArgumentException>(() => ColumnScan.FindInRange(column, double.NaN, 1, new int[3]));
        Assert.Throws<ArgumentException>(() => ColumnScan.CountInRange(column, 0, double.NaN));
        Assert.Throws<ArgumentOutOfRangeException>(() => ColumnScan.FindInRange(column, 2, 1, new int[3]));
        Assert.Throws<ArgumentException>(() => ColumnScan.FindInRange(column, 0, 1, new int[2]));
        using var huge = new HugeArray<double>(10);
        Assert.Throws<ArgumentOutOfRangeException>(() => ColumnScan.FindInRange(huge, 5, 6, 0, 1, new int[6]));
        Assert.Throws<ArgumentOutOfRangeException>(() => ColumnScan.FindInRange(huge, -1, 2, 0, 1, new int[6]));
        Assert.Throws<ArgumentException>(() => ColumnScan.FindInRange(huge, 0, 6, 0, 1, new int[5]));
        Assert.Throws<ArgumentNullException>(() => ColumnScan.FindInRange(null!, 0, 1, 0, 1, new int[1]));
        huge.Dispose();
        Assert.Throws<ObjectDisposedException>(() => ColumnScan.FindInRange(huge, 0, 1, 0, 1, new int[1]));
    }
}
