using jemalloc.Tests.Support;

namespace jemalloc.Tests.Ledger;

/// <summary>
/// The ledger's per-allocation bookkeeping lives in native memory: a million allocations allocate no
/// managed objects (nothing for the garbage collector to trace) unless stack traces are asked for.
/// </summary>
[Collection(LeakChecked.Name)]
public sealed class LedgerGcFootprintTests : LeakCheckedTest
{
    private const int Allocations = 1_000_000;

    [Fact]
    public void A_million_fixed_buffers_allocate_no_managed_memory()
    {
        var buffers = new FixedBuffer<byte>[Allocations];
        // Warm up the paths once (type numbering, slot table commit) so only steady-state costs count.
        new FixedBuffer<byte>(8).Free();
        long before = GC.GetAllocatedBytesForCurrentThread();
        for (int i = 0; i < buffers.Length; i++)
        {
            buffers[i] = new FixedBuffer<byte>(8);
        }

        long allocated = GC.GetAllocatedBytesForCurrentThread() - before;
        try
        {
            Assert.True(allocated < 1024, $"{Allocations:N0} allocations allocated {allocated:N0} managed bytes.");
            Assert.True(AllocationLedger.LiveCount >= Allocations);
        }
        finally
        {
            foreach (FixedBuffer<byte> buffer in buffers)
            {
                buffer.Free();
            }
        }
    }

    [Fact]
    public void Creating_and_freeing_in_rounds_allocates_no_managed_memory()
    {
        // Each round overflows the thread's slot cache both ways, so slots move to and from the
        // ledger's shared store in batches: that traffic must not allocate either.
        const int Rounds = 20;
        const int PerRound = 4096;
        var buffers = new FixedBuffer<byte>[PerRound];
        CreateAndFree(buffers);
        long before = GC.GetAllocatedBytesForCurrentThread();
        for (int round = 0; round < Rounds; round++)
        {
            CreateAndFree(buffers);
        }

        long allocated = GC.GetAllocatedBytesForCurrentThread() - before;
        Assert.True(allocated < 1024, $"{Rounds * PerRound:N0} creates and frees allocated {allocated:N0} managed bytes.");

        static void CreateAndFree(FixedBuffer<byte>[] buffers)
        {
            for (int i = 0; i < buffers.Length; i++)
            {
                buffers[i] = new FixedBuffer<byte>(64);
            }

            foreach (FixedBuffer<byte> buffer in buffers)
            {
                buffer.Free();
            }
        }
    }

    [Fact]
    public void A_million_stored_strings_allocate_no_managed_object_per_string()
    {
        using var store = new Utf8StringStore();
        var values = new StoredUtf8String[Allocations];
        _ = store.Add("warm up");
        long before = GC.GetAllocatedBytesForCurrentThread();
        for (int i = 0; i < values.Length; i++)
        {
            values[i] = store.Add("a name of some length, ü"u8);
        }

        long allocated = GC.GetAllocatedBytesForCurrentThread() - before;
        // Only the store's list of blocks grows: a few bytes per block of a megabyte.
        Assert.True(allocated < 64 * 1024, $"{Allocations:N0} strings allocated {allocated:N0} managed bytes.");
        Assert.True(store.BlockCount < 40);
        Assert.Equal("a name of some length, ü", values[Allocations - 1].ToString());
    }

    [Fact]
    public void Stack_traces_are_the_only_per_allocation_managed_record_and_only_when_asked_for()
    {
        const int Count = 1000;
        var buffers = new FixedBuffer<byte>[Count];
        AllocationLedger.CaptureStackTraces = true;
        long before = GC.GetAllocatedBytesForCurrentThread();
        try
        {
            for (int i = 0; i < buffers.Length; i++)
            {
                buffers[i] = new FixedBuffer<byte>(8);
            }
        }
        finally
        {
            AllocationLedger.CaptureStackTraces = false;
        }

        long allocated = GC.GetAllocatedBytesForCurrentThread() - before;
        foreach (FixedBuffer<byte> buffer in buffers)
        {
            buffer.Free();
        }

        // The measurement sees them: each recorded stack trace is at least one object.
        Assert.True(allocated > Count * 24L, $"{Count} traced allocations allocated only {allocated:N0} managed bytes.");
    }
}
