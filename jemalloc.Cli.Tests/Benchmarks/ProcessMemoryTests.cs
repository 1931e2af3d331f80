using jemalloc.Benchmarks.Infrastructure;

namespace jemalloc.Cli.Tests.Benchmarks;

public class ProcessMemoryTests
{
    [Fact]
    public void Peak_resident_memory_is_at_least_the_resident_memory()
    {
        int pid = Environment.ProcessId;
        long? resident = ProcessMemory.ResidentBytes(pid);
        long? peak = ProcessMemory.PeakResidentBytes(pid);
        Assert.NotNull(resident);
        Assert.NotNull(peak);
        Assert.True(peak >= resident, $"peak {peak} < resident {resident}");
    }

    [Fact]
    public void Touching_fresh_memory_counts_page_faults()
    {
        int pid = Environment.ProcessId;
        (long Minor, long Major) before = ProcessMemory.PageFaults(pid)!.Value;
        unsafe
        {
            const int Bytes = 64 * 1024 * 1024;
            byte* memory = (byte*)System.Runtime.InteropServices.NativeMemory.Alloc(Bytes);
            try
            {
                for (int i = 0; i < Bytes; i += 4096)
                {
                    memory[i] = 1;
                }
            }
            finally
            {
                System.Runtime.InteropServices.NativeMemory.Free(memory);
            }
        }

        (long Minor, long Major) after = ProcessMemory.PageFaults(pid)!.Value;
        Assert.True(after.Minor - before.Minor > 1000, $"only {after.Minor - before.Minor} minor faults for 16384 fresh pages");
    }

    [Fact]
    public void Resetting_the_peak_brings_it_back_to_the_resident_size()
    {
        int pid = Environment.ProcessId;
        Assert.True(ProcessMemory.ResetPeakResident(pid));
        long peak = ProcessMemory.PeakResidentBytes(pid)!.Value;
        long resident = ProcessMemory.ResidentBytes(pid)!.Value;
        Assert.True(peak - resident < 64L * 1024 * 1024, $"peak {peak} is far above resident {resident} right after a reset");
    }

    [Fact]
    public void A_process_that_does_not_exist_has_no_counters()
    {
        Assert.Null(ProcessMemory.PeakResidentBytes(int.MaxValue));
        Assert.Null(ProcessMemory.PageFaults(int.MaxValue));
        Assert.False(ProcessMemory.ResetPeakResident(int.MaxValue));
    }
}
