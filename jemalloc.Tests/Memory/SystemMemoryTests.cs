using System.Globalization;
using jemalloc.Memory;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.Memory;

/// <summary>
/// A structure too big for the memory the process can get throws <see cref="OutOfMemoryException"/>
/// at once. Each case runs in a child process: if the check regresses, the kernel's OOM killer ends
/// the child, and this test fails instead of the whole run dying.
/// </summary>
public sealed class SystemMemoryTests
{
    [LinuxOnlyFact("reads /proc/meminfo")]
    public void A_huge_array_twice_the_size_of_available_memory_throws_naming_its_size()
    {
        MemoryAvailability availability = SystemMemory.Query()!.Value;
        long length = checked((long)(availability.MemoryBytes / sizeof(long)) * 2);

        string output = RunTooBig("huge-array", length, fakeAvailable: null);

        AssertRefused(output, (ulong)length * sizeof(long));
    }

    [LinuxOnlyTheory("fakes /proc/meminfo")]
    [InlineData("safe-array", "A SafeArray<Int64>")]
    [InlineData("fixed-buffer", "A FixedBuffer<Int64>")]
    [InlineData("huge-array", "A HugeArray<Int64>")]
    public void Each_structure_is_refused_when_the_process_looks_smaller_than_the_structure(string structure, string named)
    {
        // The child is told 1 GiB is available and asked for 2 GiB: should the check regress, the
        // child only maps 2 GiB it never touches.
        const long available = 1L << 30;
        const long length = (2L << 30) / sizeof(long);

        string output = RunTooBig(structure, length, available);

        AssertRefused(output, (ulong)length * sizeof(long));
        Assert.Contains(string.Create(CultureInfo.InvariantCulture, $"{named} of {(ulong)length * sizeof(long):N0} bytes cannot fit"), output, StringComparison.Ordinal);
        Assert.Contains("the process can get about 1.0 GiB (MemAvailable + SwapFree 1.0 GiB; cgroup limit none)", output, StringComparison.Ordinal);
    }

    [LinuxOnlyFact("fakes /proc/meminfo")]
    public void A_structure_that_fits_the_faked_memory_is_created()
    {
        string output = RunTooBig("safe-array", (128L << 20) / sizeof(long), 1L << 30);
        Assert.StartsWith("CREATED", output, StringComparison.Ordinal);
    }

    [Fact]
    public void Blocks_below_the_threshold_and_blocks_that_fit_are_not_refused()
    {
        Assert.Null(Record.Exception(() => SystemMemory.ThrowIfCannotFit(SystemMemory.CheckThreshold - 1)));
        Assert.Null(Record.Exception(() => SystemMemory.ThrowIfCannotFit(SystemMemory.CheckThreshold)));
    }

    [Fact]
    public void The_description_names_the_structure_and_its_size()
    {
        Assert.Equal("a SafeArray<Int64> of 34,359,738,352 bytes", SystemMemory.Describe(unchecked((nuint)34_359_738_352L), AllocationKind.SafeBuffer, ElementTypes.IdOf<long>()));
        Assert.Equal("a block of 1,024 bytes", SystemMemory.Describe(1024, AllocationKind.Raw, 0));
    }

    private static string RunTooBig(string structure, long length, long? fakeAvailable)
    {
        List<string> arguments = ["too-big", structure, length.ToString(CultureInfo.InvariantCulture)];
        if (fakeAvailable is { } bytes)
        {
            arguments.Add(bytes.ToString(CultureInfo.InvariantCulture));
        }

        ChildProcessRunner.Result result = ChildProcessRunner.RunHelper(new Dictionary<string, string?>(), [.. arguments]);
        Assert.True(result.ExitCode == 0, $"The child did not finish normally (137 is SIGKILL, e.g. the OOM killer): {result}");
        return result.Output;
    }

    private static void AssertRefused(string output, ulong bytes)
    {
        Assert.StartsWith("OOM ", output, StringComparison.Ordinal);
        Assert.Contains($"of {bytes.ToString("N0", CultureInfo.InvariantCulture)} bytes cannot fit: the process can get about ", output, StringComparison.Ordinal);
    }
}
