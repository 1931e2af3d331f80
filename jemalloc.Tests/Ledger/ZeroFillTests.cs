using jemalloc.Tests.Support;

namespace jemalloc.Tests.Ledger;

/// <summary>
/// New structures are zero-filled even when jemalloc hands back memory it kept from an earlier free
/// (the ledger clears it itself, or drops the pages for huge-page blocks).
/// </summary>
[Collection(LeakChecked.Name)]
public sealed class ZeroFillTests : LeakCheckedTest
{
    public static TheoryData<int, bool> Sizes => new()
    {
        { 100, false },
        { 5000, false },
        { 4 << 20, false },
        { 4 << 20, true },
        { (4 << 20) + 12_345, true },
    };

    [Theory]
    [MemberData(nameof(Sizes))]
    public void A_safe_array_reusing_freed_memory_starts_zeroed(int length, bool hugePages)
    {
        var options = new AllocationOptions(MallocxFlags.None, hugePages);
        for (int round = 0; round < 3; round++)
        {
            using var array = new SafeArray<byte>(length, options);
            Assert.True(array.ToArray().AsSpan().IndexOfAnyExcept((byte)0) < 0, $"round {round}: a new array of {length} bytes was not zero-filled");
            array.Fill(0xA5);
        }
    }

    [Fact]
    public void A_fixed_buffer_reusing_freed_memory_starts_zeroed()
    {
        for (int round = 0; round < 3; round++)
        {
            var buffer = new FixedBuffer<long>(1000);
            Assert.True(buffer.ToArray().AsSpan().IndexOfAnyExcept(0L) < 0, $"round {round}: a new buffer was not zero-filled");
            buffer.Fill(-1);
            buffer.Free();
        }
    }
}
