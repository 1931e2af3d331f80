namespace jemalloc.Tests;

public unsafe class SmokeTests
{
    [Fact]
    public void Ledger_allocation_is_valid_until_freed()
    {
        void* p = AllocationLedger.Allocate(64, AllocationOptions.Default, AllocationKind.Raw, null, out AllocationHandle handle);
        Assert.True(p != null);
        Assert.True(handle.IsValid);
        AllocationLedger.Acquire(handle, "test");
        Assert.Throws<InvalidOperationException>(() => AllocationLedger.Free(handle, "test"));
        AllocationLedger.Release(handle, "test");
        AllocationLedger.Free(handle, "test");
        Assert.False(handle.IsValid);
        Assert.Throws<ObjectDisposedException>(() => AllocationLedger.Free(handle, "test"));
    }
}
