using static jemalloc.Tests.ChildProcess.Adversarial.BufferBadInputScenarios;

namespace jemalloc.Tests.ChildProcess.Adversarial;

/// <summary>
/// Failure class: bad input to arenas, allocation flags naming a thread cache or arena that does not
/// exist, raw garbage flags, a destroyed arena's flags, an arena created behind the library's back:
/// refused (ArgumentException, ObjectDisposedException) before they reach jemalloc, or safe.
/// </summary>
internal static class ArenaBadInputScenarios
{
    internal const string BadFlagsThreadCache = "bad-flags-thread-cache";
    internal const string BadFlagsArena = "bad-flags-arena";
    internal const string BadFlagsRaw = "bad-flags-raw";
    internal const string BadFlagsDestroyedArena = "bad-flags-destroyed-arena";
    internal const string BadFlagsUnownedArena = "bad-flags-unowned-arena";

    internal static void Register(Dictionary<string, Action> all)
    {
        all[BadFlagsThreadCache] = () => Flags("MallocxFlags.ThreadCache(5) (no such thread cache)", () => MallocxFlags.ThreadCache(5));
        all[BadFlagsArena] = () => Flags("MallocxFlags.Arena(9999) (no such arena)", () => MallocxFlags.Arena(9999));
        all[BadFlagsRaw] = () => Flags("MallocxFlags.FromValue(-1)", () => MallocxFlags.FromValue(-1));
        all[BadFlagsDestroyedArena] = () =>
        {
            var arena = new JemArena();
            MallocxFlags flags = arena.Flags;
            arena.Dispose();
            Flags("the flags of a destroyed JemArena", () => flags);
        };
        all[BadFlagsUnownedArena] = () =>
        {
            // An arena created behind the library's back: allocating structures in it is either
            // refused or safe (no JemArena can reset it).
            uint index = MallctlKeys.Arenas.Create.Get();
            Flags($"MallocxFlags.Arena({index}) (created by raw mallctl)", () => MallocxFlags.Arena(index), mayWork: true);
        };
    }

    /// <summary>
    /// Allocation options with bad flags, through every structure: refused with an ArgumentException
    /// (or ObjectDisposedException for a destroyed arena) before reaching jemalloc. <paramref name="mayWork"/>:
    /// succeeding is acceptable too, if the structure then works.
    /// </summary>
    private static void Flags(string what, Func<MallocxFlags> makeFlags, bool mayWork = false)
    {
        long live = AllocationLedger.LiveCount;
        MallocxFlags flags;
        try
        {
            flags = makeFlags();
        }
        catch (ArgumentException e)
        {
            Check.Info($"RESULT {what}: refused when making the flags: {e.GetType().Name}: {e.Message}");
            return;
        }

        var options = new AllocationOptions(flags);
        foreach ((string structure, Func<object> create) in new (string, Func<object>)[]
        {
            ("FixedBuffer<int>(4)", () => new FixedBuffer<int>(4, options)),
            ("SafeArray<int>(4)", () => new SafeArray<int>(4, options)),
            ("HugeArray<int>(4)", () => new HugeArray<int>(4, options)),
            ("SafeArray<int>(1M)", () => new SafeArray<int>(1 << 20, options)),
        })
        {
            try
            {
                object made = create();
                if (!mayWork)
                {
                    Check.Fail($"{what} {structure}", "was accepted; options naming a thread cache or arena that does not exist must be refused with an ArgumentException");
                }

                Check.Info($"RESULT {what} {structure}: accepted");
                switch (made)
                {
                    case FixedBuffer<int> b:
                        b.Fill(3);
                        Check.Equal(12, b.VectorSum(), $"{what} {structure} usable");
                        b.Free();
                        break;
                    case NativeBuffer<int> a:
                        a.Fill(3);
                        Check.True(a.VectorAllLessThan(4), $"{what} {structure} usable");
                        a.Dispose();
                        break;
                }
            }
            catch (Exception e) when (e is ArgumentException or ObjectDisposedException or NotSupportedException)
            {
                Check.Info($"RESULT {what} {structure}: {e.GetType().Name}: {e.Message}");
                Check.Pass();
            }
            catch (Exception e)
            {
                Check.Fail($"{what} {structure}", $"threw {e.GetType().Name} (expected an ArgumentException): {e.Message}");
            }
        }

        NoLeak(what, live);
    }
}
