using Apache.Arrow;
using jemalloc.Arrow;

namespace jemalloc.Tests.ChildProcess.Adversarial;

/// <summary>
/// Failure class: an arena reset under the Arrow add-on: a reset of an arena whose Arrow allocator's
/// arrays are in use is refused and never frees their buffers. The scenario repeats its attack; a crash
/// fails its test through the exit code.
/// </summary>
internal static class AddOnArenaResetScenarios
{
    internal const string ArenaResetUnderArrowArrays = "addon-arena-reset-under-arrow-arrays";

    internal static void Register(Dictionary<string, Action> all)
    {
        all[ArenaResetUnderArrowArrays] = ArenaResetUnderArrays;
    }

    private const int Rounds = 200;

    /// <summary>An arena reset while arrays built by its allocator live: refused, and the arrays keep their values.</summary>
    private static void ArenaResetUnderArrays()
    {
        using var arena = new JemArena();
        var allocator = new JemallocArrowAllocator(arena.Options);
        for (int round = 0; round < Rounds; round++)
        {
            Int64Array array = new Int64Array.Builder().AppendRange(Enumerable.Repeat((long)round, 1000)).Build(allocator);
            Check.ThrowsExactly<InvalidOperationException>("an arena reset under an Arrow array", arena.Reset);
            using (var other = new HugeArray<long>(1000, -1L, arena.Options))
            {
                Check.Equal((long)round, array.GetValue(999) ?? -2, "an Arrow array's value after a refused reset");
            }

            array.Dispose();
            arena.Reset();
        }
    }
}
