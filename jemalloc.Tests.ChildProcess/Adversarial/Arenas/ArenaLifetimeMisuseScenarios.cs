using static jemalloc.Tests.ChildProcess.Adversarial.ScenarioHelpers;
using static jemalloc.Tests.ChildProcess.Adversarial.BufferLifetimeMisuseScenarios;

namespace jemalloc.Tests.ChildProcess.Adversarial;

/// <summary>
/// Failure class: lifetime misuse of <see cref="JemArena"/>, on one thread: stale copies of its
/// structures after the arena's Reset or Dispose, and its options kept past its Dispose. Every public
/// member, through any copy and on any thread, throws <see cref="ObjectDisposedException"/>; a structure
/// that reuses the memory, the slot or the arena index is untouched.
/// </summary>
internal static class ArenaLifetimeMisuseScenarios
{
    internal const string StaleArenaReset = "stale-arena-reset";
    internal const string StaleArenaDispose = "stale-arena-dispose";
    internal const string StaleArenaOptions = "stale-arena-options";

    internal static void Register(Dictionary<string, Action> all)
    {
        all[StaleArenaReset] = () => AfterArena(dispose: false);
        all[StaleArenaDispose] = () => AfterArena(dispose: true);
        all[StaleArenaOptions] = ArenaOptionsAfterDispose;
    }

    private static void AfterArena(bool dispose)
    {
        var arena = new JemArena();
        FixedBuffer<int> buffer = arena.CreateBuffer<int>(16);
        FixedBuffer<int> copy = buffer;
        SafeArray<int> array = arena.CreateArray<int>(32);
        HugeArray<int> huge = arena.CreateHugeArray<int>(1 << 19);
        buffer.Fill(1);
        array.Fill(2);
        huge.Fill(3);
        // A structure outside the arena, which the reset must not touch.
        var outside = new FixedBuffer<int>(16);
        outside.Fill(4);

        if (dispose)
        {
            arena.Dispose();
        }
        else
        {
            arena.Reset();
        }

        string tag = dispose ? "after arena Dispose" : "after arena Reset";
        FixedBufferMembersThrow(tag, buffer);
        FixedBufferMembersThrow(tag + " (copy)", copy);
        SafeArrayMembersThrow(tag, array);
        HugeArrayMembersThrow(tag, huge);
        OnThreads(2, t =>
        {
            FixedBufferMembersThrow($"{tag} thread {t}", copy);
            SafeArrayMembersThrow($"{tag} thread {t}", array);
        });
        Check.True(outside.SequenceEqual(Enumerable.Repeat(4, 16).ToArray()), $"{tag}: structure outside the arena intact");

        // Disposing the invalidated arrays afterwards is harmless (no double free), and new
        // structures in a reset arena are independent of the old ones.
        Check.NoThrow($"{tag}: Dispose invalidated SafeArray", array.Dispose);
        Check.NoThrow($"{tag}: Dispose invalidated HugeArray", huge.Dispose);
        if (!dispose)
        {
            FixedBuffer<int> fresh = arena.CreateBuffer<int>(16);
            using SafeArray<int> freshArray = arena.CreateArray<int>(32);
            fresh.Fill(5);
            freshArray.Fill(6);
            FixedBufferMembersThrow(tag + " after new allocations", copy);
            SafeArrayMembersThrow(tag + " after new allocations", array);
            Check.True(fresh.SequenceEqual(Enumerable.Repeat(5, 16).ToArray()), "new arena buffer intact");
            Check.True(freshArray.SequenceEqual(Enumerable.Repeat(6, 32).ToArray()), "new arena array intact");
            fresh.Free();
            freshArray.Dispose();
            arena.Dispose();
        }
        else
        {
            Check.True(arena.IsDisposed, "arena IsDisposed");
            foreach ((string name, Action action) in new (string, Action)[]
            {
                ("CreateBuffer", () => arena.CreateBuffer<int>(1)),
                ("CreateArray", () => arena.CreateArray<int>(1)),
                ("CreateHugeArray", () => arena.CreateHugeArray<int>(1)),
                ("FixedBuffer with its Options", () => _ = new FixedBuffer<int>(1, arena.Options)),
                ("Reset", arena.Reset),
                ("Purge", arena.Purge),
                ("Decay", arena.Decay),
                ("GetStatistics", () => arena.GetStatistics()),
                ("DirtyDecayMilliseconds", () => _ = arena.DirtyDecayMilliseconds),
                ("MuzzyDecayMilliseconds set", () => arena.MuzzyDecayMilliseconds = 0),
                ("Allocate", () => AllocateRaw(arena)),
            })
            {
                Check.ThrowsExactly<ObjectDisposedException>($"destroyed JemArena.{name}", action);
            }

            Check.NoThrow("JemArena.Dispose again", arena.Dispose);
        }

        outside.Free();
    }

    private static unsafe void AllocateRaw(JemArena arena) => _ = arena.Allocate(16);

    // Options kept past their JemArena's Dispose, after jemalloc gave the index to a new JemArena:
    // they must keep throwing, not create structures in (and charge the budget of) the new arena.
    private static void ArenaOptionsAfterDispose()
    {
        var first = new JemArena();
        AllocationOptions stale = first.Options;
        first.Dispose();
        Check.Throws<ObjectDisposedException>("SafeArray with the options of a disposed arena", () => _ = new SafeArray<int>(10, stale));
        using var second = new JemArena(budgetBytes: 1 << 20);
        Check.Info($"INFO first arena {first.Index}, second arena {second.Index}");
        Check.Equal(first.Index, second.Index, "jemalloc reused the destroyed arena's index (the case under test)");
        Check.Throws<ObjectDisposedException>("SafeArray with stale options once the index is reused", () => _ = new SafeArray<int>(10, stale));
        Check.Throws<ObjectDisposedException>("FixedBuffer with stale options once the index is reused", () => _ = new FixedBuffer<int>(10, stale));
        Check.Throws<ObjectDisposedException>("HugeArray with stale options once the index is reused", () => _ = new HugeArray<int>(10, stale));
        Check.Equal(0L, second.UsedBytes, "nothing was charged to the new arena");
        using SafeArray<int> own = new(10, second.Options);
        own.Fill(1);
        Check.Equal(10, own.VectorSum(), "the new arena's own options still allocate");
    }
}
