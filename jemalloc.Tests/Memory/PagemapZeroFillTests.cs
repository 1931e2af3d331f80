using System.Runtime.Versioning;
using jemalloc.Memory;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.Memory;

/// <summary>
/// Zero-filling leaves pages the kernel has not handed out yet alone (they read as zero) and clears
/// everything else: pages present or swapped, and the partial pages at either end of a block.
/// </summary>
[Collection(LeakChecked.Name)]
[SupportedOSPlatform("linux")] // Each test is a LinuxOnlyFact: skipped elsewhere.
public sealed unsafe class PagemapZeroFillTests : LeakCheckedTest
{
    private const int BlockBytes = 64 << 20;

    [LinuxOnlyFact("reads /proc/self/pagemap")]
    public void Only_pages_that_were_touched_and_the_partial_end_pages_are_written()
    {
        nuint page = PageMap.PageSize;
        nuint length = 512 * page;
        byte* mapping = PageMap.Map(length);
        try
        {
            // Dirty pages 0 (head, partly outside the block), 10-11 and 511 (tail, partly outside).
            new Span<byte>(mapping, (int)page).Fill(0xA5);
            new Span<byte>(mapping + (10 * page), (int)(2 * page)).Fill(0xA5);
            new Span<byte>(mapping + (511 * page), (int)page).Fill(0xA5);
            Assert.Equal(4, PageMap.ResidentPages(mapping, length));

            // The block starts 100 bytes into page 0 and ends 100 bytes before the end of page 511.
            Assert.True(length - 200 >= ZeroFill.PageLookupThreshold);
            byte* block = mapping + 100;
            nuint size = length - 200;
            ZeroFill.ClearUnlessKnownZero(block, size);

            // Untouched pages stayed untouched: nothing faulted in by the clear.
            Assert.Equal(4, PageMap.ResidentPages(mapping, length));
            Assert.True(new ReadOnlySpan<byte>(block, (int)size).IndexOfAnyExcept((byte)0) < 0, "the block does not read as zero");
            Assert.True(new ReadOnlySpan<byte>(mapping, 100).IndexOfAnyExcept((byte)0xA5) < 0, "bytes before the block were changed");
            Assert.True(new ReadOnlySpan<byte>(block + size, 100).IndexOfAnyExcept((byte)0xA5) < 0, "bytes after the block were changed");
        }
        finally
        {
            PageMap.Unmap(mapping, length);
        }
    }

    [LinuxOnlyFact("reads /proc/self/pagemap")]
    public void A_block_on_fresh_pages_is_not_written_and_the_same_block_reused_is_cleared()
    {
        using CheckedModeScope uncheckedMode = CheckedModeScope.Off(); // Reuse needs the freed block back at once; checked mode quarantines it.
        // A new arena has no cached pages: its first block is a fresh mapping.
        uint arena = TestArena.Create();
        try
        {
            var options = new AllocationOptions(MallocxFlags.Arena(arena));
            nint address;
            using (var fresh = new SafeArray<byte>(BlockBytes, options))
            {
                address = fresh.Pointer;
                // Only the partial first and last pages may be cleared: a large block starts at a
                // random cache-line offset into its first page (jemalloc's cache_oblivious).
                long resident = PageMap.ResidentPages((void*)address, BlockBytes);
                Assert.True(resident <= 2, $"creating a {BlockBytes:N0}-byte array on fresh memory faulted in {resident} pages");
                AssertZero(fresh);
                fresh.Fill(0xA5);
            }

            using var reused = new SafeArray<byte>(BlockBytes, options);
            // Same block: compared by jemalloc's page (64 KiB on linux-arm64), within which the
            // cache-oblivious offset is random, not by the OS's page.
            Assert.Equal(address & ~(nint)(Jem.PageSize - 1), reused.Pointer & ~(nint)(Jem.PageSize - 1));
            Assert.True(PageMap.ResidentPages((void*)address, BlockBytes) > 0, "the freed block's pages were purged: nothing left to prove");
            AssertZero(reused);
        }
        finally
        {
            TestArena.Destroy(arena);
        }
    }

    private static void AssertZero(SafeArray<byte> array)
    {
        using MemoryLease<byte> lease = array.Lease();
        Assert.True(lease.Span.IndexOfAnyExcept((byte)0) < 0, "the array does not read as zero");
    }
}
