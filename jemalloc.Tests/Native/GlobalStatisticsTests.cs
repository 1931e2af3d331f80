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
        JemallocStatistics before = Jem.GetStatistics(exact: true);
        byte* memory = (byte*)Jem.Mallocx((nuint)Size);
        try
        {
            // Touch every page so it becomes resident.
            for (ulong offset = 0; offset < Size; offset += 4096)
            {
                memory[offset] = 1;
            }

            JemallocStatistics during = Jem.GetStatistics(exact: true);
            Assert.InRange(during.Allocated, before.Allocated + Size - Tolerance, before.Allocated + Size + Tolerance);
            Assert.True(during.Active >= before.Active + Size - Tolerance);
            Assert.True(during.Resident >= before.Resident + Size - Tolerance);
            Assert.True(during.Mapped >= before.Mapped + Size - Tolerance);
        }
        finally
        {
            Jem.Dallocx(memory);
        }

        JemallocStatistics after = Jem.GetStatistics(exact: true);
        Assert.InRange(after.Allocated, before.Allocated - Math.Min(before.Allocated, Tolerance), before.Allocated + Tolerance);
        Assert.True(after.Active <= before.Active + Tolerance);
    }
}
