namespace jemalloc.Tests.Native;

/// <summary>Global statistics: run alone so no other test allocates at the same time; checked with a tolerance anyway.</summary>
[Collection(ProcessWideState.Name)]
public unsafe class GlobalStatisticsTests
{
    private const ulong Size = 256UL << 20;
    private const ulong Tolerance = 32UL << 20;

    [Fact]
    public void Allocated_and_active_grow_with_an_allocation_and_come_back_when_it_is_freed()
    {
        JemStatistics before = Jem.GetStatistics(exact: true);
        byte* memory = (byte*)Jem.Mallocx((nuint)Size);
        try
        {
            // Touch every page so it becomes resident.
            for (ulong offset = 0; offset < Size; offset += 4096)
            {
                memory[offset] = 1;
            }

            JemStatistics during = Jem.GetStatistics(exact: true);
            Assert.InRange(during.Allocated, before.Allocated + Size - Tolerance, before.Allocated + Size + Tolerance);
            Assert.True(during.Active >= before.Active + Size - Tolerance);
            // Resident and mapped need not grow: the block may reuse memory jemalloc kept from earlier
            // frees (the library's default keeps freed large blocks as lazily freed pages). They must
            // at least cover the block.
            Assert.True(during.Resident >= Size);
            Assert.True(during.Mapped >= Size);
        }
        finally
        {
            Jem.Dallocx(memory);
        }

        JemStatistics after = Jem.GetStatistics(exact: true);
        Assert.InRange(after.Allocated, before.Allocated - Math.Min(before.Allocated, Tolerance), before.Allocated + Tolerance);
        Assert.True(after.Active <= before.Active + Tolerance);
    }
}
