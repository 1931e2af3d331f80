using System.Diagnostics.CodeAnalysis;
using BenchmarkDotNet.Attributes;

namespace jemalloc.Benchmarks.Micro;

/// <summary>
/// What checked mode (<see cref="AllocationLedger.CheckedMode"/>) costs: it changes only the free
/// path (poison the block, hold it in quarantine, check it when it leaves), so each size is measured
/// as create + write + free with checked mode off (the baseline of its size) and on. Element access
/// is the same code in both modes.
/// </summary>
[MemoryDiagnoser]
[SuppressMessage("Performance", "CA1822:Mark members as static", Justification = "BenchmarkDotNet runs instance methods.")]
public class CheckedModeBenchmarks
{
    private const int SmallBytes = 64;
    private const int LargeInts = 1 << 18;   // 1 MiB

    /// <summary>Turns checked mode on for the checked rows only.</summary>
    [GlobalSetup(Targets = [nameof(SmallChecked), nameof(LargeChecked)])]
    public void CheckedOn() => AllocationLedger.CheckedMode = true;

    /// <summary>Turns checked mode off again, which checks and frees the quarantine.</summary>
    [GlobalCleanup]
    public void CheckedOff()
    {
        AllocationLedger.CheckedMode = false;
        if (AllocationLedger.UseAfterFreeWritesDetected != 0)
        {
            throw new InvalidOperationException($"checked mode reported {AllocationLedger.UseAfterFreeWritesDetected} use-after-free writes in a benchmark that makes none.");
        }
    }

    /// <summary>A 64-byte FixedBuffer, checked mode off.</summary>
    [Benchmark(Baseline = true, Description = "new FixedBuffer<byte>(64) + write + Free()")]
    [BenchmarkCategory("64 B")]
    public byte Small() => CreateWriteFreeSmall();

    /// <summary>The same with checked mode on.</summary>
    [Benchmark(Description = "new FixedBuffer<byte>(64) + write + Free(), checked mode")]
    [BenchmarkCategory("64 B")]
    public byte SmallChecked() => CreateWriteFreeSmall();

    /// <summary>A 1 MiB SafeArray, checked mode off.</summary>
    [Benchmark(Baseline = true, Description = "new SafeArray<int>(262144) + write + Dispose()")]
    [BenchmarkCategory("1 MiB")]
    public int Large() => CreateWriteFreeLarge();

    /// <summary>The same with checked mode on.</summary>
    [Benchmark(Description = "new SafeArray<int>(262144) + write + Dispose(), checked mode")]
    [BenchmarkCategory("1 MiB")]
    public int LargeChecked() => CreateWriteFreeLarge();

    private static byte CreateWriteFreeSmall()
    {
        var buffer = new FixedBuffer<byte>(SmallBytes);
        buffer[SmallBytes - 1] = 7;
        byte value = buffer[SmallBytes - 1];
        buffer.Free();
        return value;
    }

    private static int CreateWriteFreeLarge()
    {
        using var array = new SafeArray<int>(LargeInts);
        array[LargeInts - 1] = 7;
        return array[LargeInts - 1];
    }
}
