using System.Diagnostics.CodeAnalysis;
using BenchmarkDotNet.Attributes;
using jemalloc.Benchmarks.Infrastructure;

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

    /// <summary>Checks the row that ran (the value read back, no use-after-free reported, nothing kept).</summary>
    [GlobalCleanup(Target = nameof(Small))]
    public void CheckSmall() => CheckAndTurnOff("64 B", checkedRow: false, () => Small());

    /// <summary>Checks the row that ran, then turns checked mode off, which checks and frees the quarantine.</summary>
    [GlobalCleanup(Target = nameof(SmallChecked))]
    public void CheckSmallChecked() => CheckAndTurnOff("64 B, checked mode", checkedRow: true, () => SmallChecked());

    /// <summary>Checks the row that ran (the value read back, no use-after-free reported, nothing kept).</summary>
    [GlobalCleanup(Target = nameof(Large))]
    public void CheckLarge() => CheckAndTurnOff("1 MiB", checkedRow: false, () => Large());

    /// <summary>Checks the row that ran, then turns checked mode off, which checks and frees the quarantine.</summary>
    [GlobalCleanup(Target = nameof(LargeChecked))]
    public void CheckLargeChecked() => CheckAndTurnOff("1 MiB, checked mode", checkedRow: true, () => LargeChecked());

    private static void CheckAndTurnOff(string row, bool checkedRow, Func<int> operation)
    {
        string name = $"micro checked mode: create + write + free, {row}";
        try
        {
            ResultChecks.Equal(name, checkedRow, AllocationLedger.CheckedMode, "checked mode is on exactly for the checked rows");
            ResultChecks.Equal(name, 7, BrokenResultSwitch.Corrupt(operation()), "the element written, read back");
        }
        finally
        {
            AllocationLedger.CheckedMode = false;
        }

        ResultChecks.Equal(name, 0L, AllocationLedger.UseAfterFreeWritesDetected, "use-after-free writes reported by checked mode");
        if (!checkedRow)
        {
            // Checked mode holds freed blocks in quarantine: only the unchecked rows can show that the operation gives back all it takes.
            MicroChecks.FreesEverything(name, () => operation());
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
