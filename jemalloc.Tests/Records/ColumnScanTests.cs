using System.Text;
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

    [Theory]
    [InlineData(0)]
    [InlineData(5)]
    [InlineData(17)]
    [InlineData(3_001)]
    public void KeepStartingWith_keeps_exactly_the_candidates_whose_string_starts_with_the_prefix_in_order(int length)
    {
        using var store = new Utf8StringStore();
        var random = new Random(length);
        string[] words = ["Al", "Alpha", "Bé", "Béta", "", "A", "日本", "日本語", "Ålborg", "emoji 😀"];
        string[] texts = [.. Enumerable.Range(0, length).Select(_ => words[random.Next(words.Length)] + random.Next(100))];
        StoredUtf8String[] column = [.. texts.Select(t => t.Length % 7 == 0 ? default : store.Add(t))];
        int[] candidates = [.. Enumerable.Range(0, length).Where(_ => random.Next(3) == 0)];
        foreach (string prefix in new[] { "Al", "Bé", "日本", "", "emoji 😀", "zz" })
        {
            int[] positions = [.. candidates];
            int kept = ColumnScan.KeepStartingWith(column, positions, Encoding.UTF8.GetBytes(prefix));
            int[] expected = [.. candidates.Where(i => column[i].StartsWith(prefix))];
            Assert.Equal(expected, positions[..kept]);
        }
    }

    [Fact]
    public void KeepStartingWith_checks_every_value_and_position()
    {
        var store = new Utf8StringStore();
        StoredUtf8String[] column = [store.Add("Alpha"), store.Add("Beta"), store.Add("Alto")];
        using (StringStoreReadScope scope = store.EnterRead())
        {
            int[] positions = [0, 1, 2];
            Assert.Equal(2, ColumnScan.KeepStartingWith(column, positions, "Al"u8));
            Assert.Equal([0, 2], positions[..2]);
        }

        int[] outsideEnd = [0, 3];
        int[] negative = [-1];
        ArgumentOutOfRangeException outside = Assert.Throws<ArgumentOutOfRangeException>(() => ColumnScan.KeepStartingWith(column, outsideEnd, "Al"u8));
        Assert.Equal("positions", outside.ParamName);
        Assert.Throws<ArgumentOutOfRangeException>(() => ColumnScan.KeepStartingWith(column, negative, "Al"u8));

        // A mixed value (one string's offset, another's length): refused, as by StoredUtf8String.
        StoredUtf8String[] torn = [column[1], WithLengthOf(column[0], column[1])];
        int[] both = [0, 1];
        Assert.Throws<InvalidOperationException>(() => ColumnScan.KeepStartingWith(torn, both, "Al"u8));

        // After the store is disposed every value throws; nothing is read from the freed blocks.
        store.Dispose();
        int[] second = [1];
        Assert.Throws<ObjectDisposedException>(() => ColumnScan.KeepStartingWith(column, second, "Al"u8));
        Assert.Equal(0, ColumnScan.KeepStartingWith(column, Span<int>.Empty, "Al"u8));
    }

    private static StoredUtf8String WithLengthOf(StoredUtf8String x, StoredUtf8String y)
    {
        StoredUtf8String result = x;
        System.Runtime.CompilerServices.Unsafe.Add(ref System.Runtime.CompilerServices.Unsafe.As<StoredUtf8String, int>(ref result), 3) =
            System.Runtime.CompilerServices.Unsafe.Add(ref System.Runtime.CompilerServices.Unsafe.As<StoredUtf8String, int>(ref y), 3);
        return result;
    }
}
