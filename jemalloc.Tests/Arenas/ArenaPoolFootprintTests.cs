using System.Globalization;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.Arenas;

/// <summary>
/// Making and disposing arenas in a loop (a <see cref="JemArena"/> per request, a
/// <see cref="NativeCache"/> cleared again and again) must not grow the process: jemalloc's
/// <c>arena.&lt;i&gt;.destroy</c> leaves each arena's metadata block mapped, so before disposed arenas
/// were pooled every cycle added about 4.5 KiB of metadata and 2 MiB or more of address space, and a
/// mapping. Measured in a child process, after warm-up cycles, so no other test moves the figures.
/// </summary>
public sealed class ArenaPoolFootprintTests
{
    private const int Cycles = 5000;
    private const long MetadataSlackBytes = 1 << 20;
    private const int MapsSlackLines = 48;
    private const long VmSizeSlackKilobytes = 96 << 10;

    // What else grows a .NET process meanwhile, kept out of the figures: glibc's 64 MiB malloc arena
    // per new thread, the tiered JIT's recompilations, and jemalloc's automatic arenas (each new
    // thread may initialise one, 2 MiB of metadata). What is left (thread stacks of new pool threads)
    // fits in the slack many times over; without the pool the same cycles grew the address space by
    // about 4 MiB and the metadata by about 4.5 KiB each.
    private static readonly Dictionary<string, string?> QuietProcess = new()
    {
        ["MALLOC_ARENA_MAX"] = "1",
        ["DOTNET_TieredCompilation"] = "0",
        ["JE_MALLOC_CONF"] = "narenas:1",
    };

    [LinuxOnlyTheory("/proc/self/maps and /proc/self/status")]
    [InlineData("arena")]
    [InlineData("cache")]
    [InlineData("cache-lease")]
    public void Thousands_of_arena_cycles_keep_metadata_mappings_and_address_space_flat(string mode)
    {
        ChildProcessRunner.Result result = ChildProcessRunner.RunHelper(QuietProcess, "arena-cycles", mode, Cycles.ToString(CultureInfo.InvariantCulture));
        Assert.True(result.ExitCode == 0, result.ToString());
        long[] start = Figures(result, "START");
        long[] end = Figures(result, "END");
        string report = $"{mode}, {Cycles} cycles: metadata {start[0]:N0} -> {end[0]:N0} bytes, maps {start[1]} -> {end[1]} lines, VmSize {start[2]:N0} -> {end[2]:N0} kB, VmRSS {start[3]:N0} -> {end[3]:N0} kB";
        Assert.True(end[0] - start[0] <= MetadataSlackBytes, report);
        Assert.True(end[1] - start[1] <= MapsSlackLines, report);
        Assert.True(end[2] - start[2] <= VmSizeSlackKilobytes, report);
    }

    private static long[] Figures(ChildProcessRunner.Result result, string label)
    {
        string? line = result.Output.Split('\n').Select(l => l.Trim()).FirstOrDefault(l => l.StartsWith(label + " ", StringComparison.Ordinal));
        Assert.True(line is not null, result.ToString());
        return line.Split(' ')[1..].Select(f => long.Parse(f, CultureInfo.InvariantCulture)).ToArray();
    }
}
