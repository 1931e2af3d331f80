using System.Diagnostics;
using System.Runtime.InteropServices;

namespace jemalloc.Tests.ChildProcess.Adversarial;

/// <summary>
/// Too big is an exception: a structure larger than the memory the process can get (physical memory
/// plus swap) throws OutOfMemoryException at once, instead of being zero-filled until the kernel
/// kills the process. A watchdog (see <see cref="Scenarios"/>) stops the child if it starts to fill.
/// </summary>
internal static class TooBigScenarios
{
    [StructLayout(LayoutKind.Sequential, Size = 64)]
    internal struct Line : IEquatable<Line>
    {
        public long First;

        public readonly bool Equals(Line other) => First == other.First;

        public override readonly bool Equals(object? obj) => obj is Line other && Equals(other);

        public override readonly int GetHashCode() => First.GetHashCode();
    }

    internal static void Register(Dictionary<string, Action> all)
    {
        all["too-big-safearray"] = () =>
        {
            long available = PhysicalPlusSwap();
            // SafeArray<long> reaches 16 GiB at most; where that is not beyond memory, a 64-byte struct is.
            if ((long)int.MaxValue * sizeof(long) > available)
            {
                TooBig($"SafeArray<long>({int.MaxValue:N0})", () => new SafeArray<long>(int.MaxValue));
            }
            else
            {
                TooBig($"SafeArray<Line64>({int.MaxValue:N0}) = {(long)int.MaxValue * 64:N0} bytes", () => new SafeArray<Line>(int.MaxValue));
            }
        };
        all["too-big-hugearray"] = () =>
        {
            long elements = PhysicalPlusSwap() / sizeof(long) * 2;
            TooBig($"HugeArray<long>({elements:N0}) = 2x physical memory + swap", () => new HugeArray<long>(elements));
        };
        all["too-big-hugearray-just-over"] = () =>
        {
            long elements = (PhysicalPlusSwap() + (1L << 30)) / sizeof(long);
            TooBig($"HugeArray<long>({elements:N0}) = physical memory + swap + 1 GiB", () => new HugeArray<long>(elements));
        };
        all["too-big-with-value"] = () =>
        {
            // The create-with-value constructors skip the zero pass: they must refuse as early, never start filling.
            long elements = (PhysicalPlusSwap() + (1L << 30)) / sizeof(long);
            TooBig($"HugeArray<long>({elements:N0}, value) = physical memory + swap + 1 GiB", () => new HugeArray<long>(elements, -1L));
            TooBig($"SafeArray<Line64>({int.MaxValue:N0}, value) = {(long)int.MaxValue * 64:N0} bytes", () => new SafeArray<Line>(int.MaxValue, new Line { First = 1 }));
        };
    }

    private static void TooBig(string what, Func<IDisposable> create)
    {
        Check.Info($"INFO physical+swap={PhysicalPlusSwap():N0} bytes");
        long live = AllocationLedger.LiveCount;
        var stopwatch = Stopwatch.StartNew();
        try
        {
            using IDisposable made = create();
            Check.Fail(what, $"was allocated ({stopwatch.Elapsed.TotalSeconds:N1} s); more than the machine has must throw OutOfMemoryException");
        }
        catch (OutOfMemoryException e)
        {
            Check.Info($"RESULT {what}: OutOfMemoryException after {stopwatch.Elapsed.TotalSeconds:N2} s: {e.Message}");
            Check.Pass();
        }
        catch (Exception e)
        {
            Check.Fail(what, $"threw {e.GetType().Name} (expected OutOfMemoryException): {e.Message}");
        }

        Check.Equal(live, AllocationLedger.LiveCount, "nothing left in the ledger by the refused allocation");
        using var small = new SafeArray<long>(1000);
        small.Fill(1);
        Check.Equal(1000L, small.VectorSum(), "the process still allocates after the refusal");
    }

    internal static long PhysicalPlusSwap()
    {
        long total = 0;
        foreach (string line in File.ReadLines("/proc/meminfo"))
        {
            if (line.StartsWith("MemTotal:", StringComparison.Ordinal) || line.StartsWith("SwapTotal:", StringComparison.Ordinal))
            {
                total += long.Parse(line.Split(' ', StringSplitOptions.RemoveEmptyEntries)[1], System.Globalization.CultureInfo.InvariantCulture) * 1024;
            }
        }

        return total;
    }
}
