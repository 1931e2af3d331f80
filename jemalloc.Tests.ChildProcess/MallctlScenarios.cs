namespace jemalloc.Tests.ChildProcess;

/// <summary>Scenarios for the mallctl policy tests: calls that crashed the process before the policy existed.</summary>
internal static class MallctlScenarios
{
    internal static bool Handles(string? scenario) => scenario is "mallctl-crash-cases" or "arena-limit";

    internal static int Run(string scenario) => scenario == "arena-limit" ? ArenaLimit() : CrashCases();

    /// <summary>Each call once; prints "CASE name ExceptionType" (or "CASE name returned") and "DONE" at the end.</summary>
    private static unsafe int CrashCases()
    {
        using var arena = new JemArena();
        uint owned = arena.Index;
        var cases = new (string Name, Action Call)[]
        {
            ("arenas.create.set", () => MallctlKeys.Arenas.Create.Set(0u)),
            ("tcache.flush.unknown", () => Jem.SetMallctl("tcache.flush", 5u)),
            ("tcache.destroy.unknown", () => Jem.SetMallctl("tcache.destroy", 5u)),
            ("tcache.flush.huge", () => Jem.SetMallctl("tcache.flush", 1_000_000u)),
            ("experimental.hooks.remove", () => Jem.SetMallctl("experimental.hooks.remove", (nuint)0x1234)),
            ("experimental.hooks.install", () => Jem.SetMallctl("experimental.hooks.install", (nuint)0x1234)),
            ("arena.0.extent_hooks.set", () => Jem.SetMallctl("arena.0.extent_hooks", (nuint)0x1234)),
            ("arena.0.extent_hooks.get", () => Jem.GetMallctl<nuint>("arena.0.extent_hooks")),
            ("arenas.lookup", () => Jem.SetMallctl("arenas.lookup", (nuint)0x1234)),
            ("thread.allocatedp", () => Jem.GetMallctl<nuint>("thread.allocatedp")),
            ("arenas.create.command", () => Jem.MallctlCommand("arenas.create")),
            ("tcache.create.command", () => Jem.MallctlCommand("tcache.create")),
            ("owned.reset", () => MallctlKeys.Arena(owned).Reset.Run()),
            ("owned.destroy", () => MallctlKeys.Arena(owned).Destroy.Run()),
            ("owned.reset.mib", () => Jem.MallctlNameToMib<uint>("arena.0.reset").WithIndex(1, owned).Run()),
            ("owned.reset.raw", () => Jem.Mallctl($"arena.{owned}.reset", null, null, null, 0)),
            ("owned.destroy.rawmib", () => RawMib($"arena.{owned}.destroy")),
            ("all.reset", () => MallctlKeys.Arena(MallctlKeys.AllArenas).Reset.Run()),
            ("all.destroy.raw", () => Jem.Mallctl("arena.4096.destroy", null, null, null, 0)),
            ("destroyed.decay_ms", () => Jem.GetMallctl<nint>("arena.4097.dirty_decay_ms")),
            ("all.decay_ms.raw", () => { nint v = 0; nuint l = (nuint)sizeof(nint); Jem.Mallctl("arena.4096.dirty_decay_ms", &v, &l, null, 0); }),
            ("thread.arena.owned", () => MallctlKeys.Thread.Arena.Set(owned)),
            ("thread.arena.owned.raw", () => { uint v = owned; Jem.Mallctl("thread.arena", null, null, &v, sizeof(uint)); }),
            ("arenas.create.raw.nulllength", () => { uint v = 0; Console.WriteLine($"RESULT arenas.create.raw.nulllength {Jem.Mallctl("arenas.create", &v, null, null, 0)}"); }),
            ("flags.tcache5", () => new FixedBuffer<int>(4, new AllocationOptions(MallocxFlags.ThreadCache(5))).Free()),
            ("flags.arena4000", () => new FixedBuffer<int>(4, new AllocationOptions(MallocxFlags.Arena(4000))).Free()),
            ("jem.mallocx.tcache5", () => Jem.Free(Jem.Mallocx(16, MallocxFlags.ThreadCache(5)))),
            ("jem.mallocx.tcache.next", () => Jem.Free(Jem.Mallocx(16, MallocxFlags.ThreadCache(MallctlKeys.Tcache.Create.Get() + 1)))),
            ("jem.dallocx.tcache7", () => DallocxAndFree(MallocxFlags.ThreadCache(7))),
            ("jem.mallocx.arena4000", () => Jem.Free(Jem.Mallocx(16, MallocxFlags.Arena(4000)))),
        };
        foreach ((string name, Action call) in cases)
        {
            try
            {
                call();
                Console.WriteLine($"CASE {name} returned");
            }
            catch (Exception exception)
            {
                Console.WriteLine($"CASE {name} {exception.GetType().Name} {exception.Message.ReplaceLineEndings(" ")}");
            }
        }

        // The arena is still intact: it allocates and resets through its own API.
        FixedBuffer<int> buffer = arena.CreateBuffer<int>(16);
        buffer[3] = 7;
        Console.WriteLine($"ARENA_STILL_USABLE {buffer[3]}");
        buffer.Free();

        arena.Reset();
        Console.WriteLine("DONE");
        return 0;
    }

    // Frees the block whether or not Dallocx refused the flags, so that only the refusal is printed.
    private static unsafe void DallocxAndFree(MallocxFlags flags)
    {
        void* memory = Jem.Malloc(16);
        try
        {
            Jem.Dallocx(memory, flags);
            memory = null;
        }
        finally
        {
            Jem.Free(memory);
        }
    }

    private static unsafe void RawMib(string name)
    {
        Span<nuint> mib = stackalloc nuint[4];
        _ = Jem.MallctlNameToMib(name, mib, out int length);
        _ = Jem.MallctlByMib(mib[..length], null, null, null, 0);
    }

    /// <summary>Creates JemArenas until jemalloc's limit; prints how it failed and that nothing leaked.</summary>
    private static int ArenaLimit()
    {
        var arenas = new List<JemArena>();
        try
        {
            while (arenas.Count < 5000)
            {
                arenas.Add(new JemArena());
            }

            Console.WriteLine("LIMIT none");
        }
        catch (Exception exception)
        {
            Console.WriteLine($"LIMIT {arenas.Count} {Jem.ArenaCount} {exception.GetType().Name} {exception.Message.ReplaceLineEndings(" ")}");
        }

        // A second attempt fails the same way: the first left no account or arena behind.
        try
        {
            using var extra = new JemArena();
            Console.WriteLine("SECOND created");
        }
        catch (Exception exception)
        {
            Console.WriteLine($"SECOND {exception.GetType().Name} {Jem.ArenaCount}");
        }

        try
        {
            _ = MallctlKeys.Arenas.Create.Get();
            Console.WriteLine("KEY created");
        }
        catch (Exception exception)
        {
            Console.WriteLine($"KEY {exception.GetType().Name}");
        }

        // Disposing one frees an index for the next.
        uint freed = arenas[^1].Index;
        arenas[^1].Dispose();
        arenas.RemoveAt(arenas.Count - 1);
        using (var again = new JemArena())
        {
            FixedBuffer<long> buffer = again.CreateBuffer<long>(8);
            buffer[0] = 42;
            Console.WriteLine($"REUSED {again.Index == freed} {buffer[0]}");
            buffer.Free();
        }

        foreach (JemArena arena in arenas)
        {
            arena.Dispose();
        }

        Console.WriteLine("DONE");
        return 0;
    }
}
