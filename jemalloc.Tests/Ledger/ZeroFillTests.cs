using jemalloc.Tests.Support;

namespace jemalloc.Tests.Ledger;

/// <summary>
/// New structures are zero-filled even when jemalloc hands back memory it kept from an earlier free.
/// Each structure is made in an arena of its own, without thread caches, so that freeing it and
/// making the same size again gets the same memory back: the test checks it does, so it proves the
/// dirty memory really was reused and then cleared. (Large blocks start at a random cache-line
/// offset into their first page, jemalloc's <c>cache_oblivious</c>, so pages are compared.)
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
    public void A_safe_array_reusing_freed_memory_starts_zeroed(int length, bool hugePages) =>
        AssertReusedBlocksStartZeroed(length, hugePages, $"{length} bytes");

    public static TheoryData<int, long> SizesAroundTheStreamingFloor => new()
    {
        { (64 << 10) - 1, FillPolicy.Automatic },
        { (64 << 10) - 1, FillPolicy.Always },
        { (64 << 10) - 1, FillPolicy.Never },
        { 64 << 10, FillPolicy.Automatic },
        { 64 << 10, FillPolicy.Always },
        { 64 << 10, FillPolicy.Never },
    };

    // Blocks below the streaming floor are cleared without asking the fill policy, the others with
    // the stores it chooses: either way, whatever the threshold, a dirty reused block reads zero.
    [Theory]
    [MemberData(nameof(SizesAroundTheStreamingFloor))]
    public void A_dirty_reused_block_at_the_streaming_floor_starts_zeroed_under_every_fill_policy(int length, long threshold)
    {
        long previousThreshold = FillPolicy.NonTemporalThresholdBytes;
        FillPolicy.NonTemporalThresholdBytes = threshold;
        try
        {
            AssertReusedBlocksStartZeroed(length, hugePages: false, $"{length} bytes, threshold {threshold}");
        }
        finally
        {
            FillPolicy.NonTemporalThresholdBytes = previousThreshold;
        }
    }

    // Three arrays in turn in an arena of their own, each dirtied before it is freed: the second and
    // third must get the first one's block back (else reuse was not tested) and read zero.
    private static void AssertReusedBlocksStartZeroed(int length, bool hugePages, string what)
    {
        using CheckedModeScope uncheckedMode = CheckedModeScope.Off(); // Reuse needs the freed block back at once; checked mode quarantines it.
        uint arena = TestArena.Create();
        try
        {
            var options = new AllocationOptions(MallocxFlags.Arena(arena), hugePages);
            nint previous = 0;
            for (int round = 0; round < 3; round++)
            {
                using var array = new SafeArray<byte>(length, options);
                if (round > 0)
                {
                    Assert.True(Page(previous) == Page(array.Pointer), $"{what}, round {round}: jemalloc did not hand back the freed block, so reuse was not tested");
                }

                Assert.True(array.ToArray().AsSpan().IndexOfAnyExcept((byte)0) < 0, $"{what}, round {round}: a new array was not zero-filled");
                array.Fill(0xA5);
                Assert.Equal(0xA5, array[0]);
                Assert.Equal(0xA5, array[length - 1]);
                previous = array.Pointer;
            }
        }
        finally
        {
            TestArena.Destroy(arena);
        }
    }

    [Fact]
    public void A_fixed_buffer_reusing_freed_memory_starts_zeroed()
    {
        using CheckedModeScope uncheckedMode = CheckedModeScope.Off(); // Reuse needs the freed block back at once; checked mode quarantines it.
        uint arena = TestArena.Create();
        try
        {
            var options = new AllocationOptions(MallocxFlags.Arena(arena));
            nint previous = 0;
            for (int round = 0; round < 3; round++)
            {
                var buffer = new FixedBuffer<long>(1000, options);
                if (round > 0)
                {
                    Assert.True(Page(previous) == Page(buffer.Pointer), $"round {round}: jemalloc did not hand back the freed block, so reuse was not tested");
                }

                Assert.True(buffer.ToArray().AsSpan().IndexOfAnyExcept(0L) < 0, $"round {round}: a new buffer was not zero-filled");
                buffer.Fill(-1);
                previous = buffer.Pointer;
                buffer.Free();
            }
        }
        finally
        {
            TestArena.Destroy(arena);
        }
    }

    // jemalloc's page, not the OS's: the cache-oblivious offset is random within jemalloc's page,
    // which is 64 KiB on linux-arm64 whatever the kernel's page.
    private static nint Page(nint address) => address & ~(nint)(Jem.PageSize - 1);
}
