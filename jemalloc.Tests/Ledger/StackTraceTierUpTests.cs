using jemalloc.Tests.Support;

namespace jemalloc.Tests.Ledger;

/// <summary>
/// The ledger once recorded the allocation's stack trace by skipping a fixed number of frames
/// (<c>new StackTrace(3)</c>), which is only right while the allocation path is not inlined; once the
/// JIT tiers it up, the skipped frames include the caller's, and <c>AllocatedAt</c> no longer names it.
/// </summary>
[Collection(LeakChecked.Name)]
public sealed unsafe class StackTraceTierUpTests : LeakCheckedTest
{
    [Fact]
    public void Snapshot_names_the_allocating_method_after_the_allocation_path_is_tiered_up()
    {
        for (int round = 0; round < 5; round++)
        {
            for (int i = 0; i < 2000; i++)
            {
                new FixedBuffer<byte>(8).Free();
            }

            Thread.Sleep(200);
        }

        AllocationLedger.CaptureStackTraces = true;
        FixedBuffer<byte> buffer;
        try
        {
            buffer = new FixedBuffer<byte>(8);
        }
        finally
        {
            AllocationLedger.CaptureStackTraces = false;
        }

        try
        {
            AllocationInfo info = Assert.Single(AllocationLedger.Snapshot(), i => i.Address == buffer.Pointer);
            Assert.Contains(nameof(Snapshot_names_the_allocating_method_after_the_allocation_path_is_tiered_up), info.AllocatedAt, StringComparison.Ordinal);
        }
        finally
        {
            buffer.Free();
        }
    }
}
