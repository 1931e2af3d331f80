using jemalloc.Tests.Support;

namespace jemalloc.Tests.Buffers;

[Collection(LeakChecked.Name)]
public sealed class HugeArrayGatherTests : LeakCheckedTest
{
    [Fact]
    public void Gather_copies_the_elements_at_the_indices_in_their_order()
    {
        using var array = new HugeArray<long>(1000);
        for (long i = 0; i < array.Length; i++)
        {
            array[i] = i * 10;
        }

        long[] indices = [999, 0, 500, 500, 3];
        var values = new long[indices.Length + 2];
        values.AsSpan().Fill(-7);
        array.Gather(indices, values);
        Assert.Equal([9990L, 0, 5000, 5000, 30, -7, -7], values);
        array.Gather([], []);
    }

    [Theory]
    [InlineData(-1L)]
    [InlineData(1000L)]
    [InlineData(long.MaxValue)]
    public void An_index_outside_the_array_throws_and_copies_nothing(long bad)
    {
        using var array = new HugeArray<int>(1000, 5);
        var values = new int[3];
        Assert.Throws<IndexOutOfRangeException>(() => array.Gather([1, bad, 2], values));
        Assert.Equal([0, 0, 0], values);
    }

    [Fact]
    public void A_short_destination_or_a_disposed_array_throws()
    {
        var array = new HugeArray<int>(10);
        ArgumentException e = Assert.Throws<ArgumentException>(() => array.Gather([1, 2], new int[1]));
        Assert.Equal("destination", e.ParamName);
        array.Dispose();
        Assert.Throws<ObjectDisposedException>(() => array.Gather([1], new int[1]));
    }
}
