using System.Globalization;
using jemalloc.Interop;

namespace jemalloc.Tests.ChildProcess;

/// <summary>
/// Runs arena create/dispose cycles and prints the process's footprint before and after them:
/// <c>START|END &lt;metadata bytes&gt; &lt;/proc/self/maps lines&gt; &lt;VmSize kB&gt; &lt;VmRSS kB&gt;</c>.
/// In a child process so that no other test's memory moves the figures. Linux only (/proc).
/// </summary>
internal static class ArenaCycleScenario
{
    // Cycles run before the first figure: the first ones map what the process keeps for good
    // (the ledger's tables, the JIT's code, the first arenas).
    private const int WarmUpCycles = 1000;

    /// <param name="mode">arena (new JemArena, a FixedBuffer in it, Dispose), cache (NativeCache.Clear with a few entries) or cache-lease (the same with a lease open across each Clear).</param>
    /// <param name="cycles">Cycles measured.</param>
    internal static int Run(string mode, int cycles)
    {
        Action cycle;
        NativeCache? cache = null;
        switch (mode)
        {
            case "arena":
                cycle = ArenaCycle;
                break;
            case "cache":
            case "cache-lease":
                cache = new NativeCache(64L << 20);
                NativeCache c = cache;
                bool lease = mode == "cache-lease";
                cycle = () => CacheCycle(c, lease);
                break;
            default:
                Console.Error.WriteLine($"unknown mode {mode}");
                return 2;
        }

        for (int i = 0; i < WarmUpCycles; i++)
        {
            cycle();
        }

        Print("START");
        for (int i = 0; i < cycles; i++)
        {
            cycle();
        }

        Print("END");
        cache?.Dispose();
        return 0;
    }

    private static void ArenaCycle()
    {
        using var arena = new JemArena();
        var buffer = new FixedBuffer<byte>(200, arena.Options);
        buffer.Free();
    }

    private static void CacheCycle(NativeCache cache, bool lease)
    {
        byte[] value = new byte[100];
        for (int key = 0; key < 4; key++)
        {
            cache.Set(key, value);
        }

        if (lease && cache.TryGet(1, out NativeCacheLease open))
        {
            cache.Clear(); // The cleared generation's arena goes when the lease does.
            open.Dispose();
        }
        else
        {
            cache.Clear();
        }
    }

    private static unsafe void Print(string label)
    {
        GC.Collect();
        GC.WaitForPendingFinalizers();
        GC.Collect();
        ulong epoch = 1;
        nuint metadata = 0;
        nuint length = (nuint)sizeof(nuint);
        fixed (byte* epochName = "epoch\0"u8, metadataName = "stats.metadata\0"u8)
        {
            _ = JemNative.Mallctl(epochName, null, null, &epoch, sizeof(ulong));
            _ = JemNative.Mallctl(metadataName, &metadata, &length, null, 0);
        }

        int maps = File.ReadLines("/proc/self/maps").Count();
        long vmSize = 0, rss = 0;
        foreach (string line in File.ReadLines("/proc/self/status"))
        {
            if (line.StartsWith("VmSize:", StringComparison.Ordinal))
            {
                vmSize = Kilobytes(line);
            }
            else if (line.StartsWith("VmRSS:", StringComparison.Ordinal))
            {
                rss = Kilobytes(line);
            }
        }

        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{label} {metadata} {maps} {vmSize} {rss}"));
    }

    private static long Kilobytes(string line) =>
        long.Parse(line.AsSpan(line.IndexOf(':', StringComparison.Ordinal) + 1).Trim().TrimEnd("kB").Trim(), CultureInfo.InvariantCulture);
}
