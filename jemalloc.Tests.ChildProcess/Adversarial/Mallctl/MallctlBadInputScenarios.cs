namespace jemalloc.Tests.ChildProcess.Adversarial;

/// <summary>
/// Failure class: bad input to the raw mallctl API (MallctlKeys and <c>Jem.*Mallctl</c>): keys the raw
/// API cannot serve, names jemalloc would read as another key, bad keys and types. Each must throw a
/// clear .NET exception (MallctlException or another conventional type), never crash the process. One
/// scenario per call: each runs in its own child process, so one crash fails one test.
/// </summary>
internal static class MallctlBadInputScenarios
{
    internal const string MallctlArenasCreateSet = "mallctl-arenas-create-set";
    internal const string MallctlArenasCreateCommand = "mallctl-arenas-create-command";
    internal const string MallctlTcacheFlush = "mallctl-tcache-flush";
    internal const string MallctlTcacheDestroy = "mallctl-tcache-destroy";
    internal const string MallctlHooksRemove = "mallctl-hooks-remove";
    internal const string MallctlExtentHooks = "mallctl-extent-hooks";
    internal const string MallctlTcacheCreateCommand = "mallctl-tcache-create-command";
    internal const string MallctlArenasLookupRead = "mallctl-arenas-lookup-read";
    internal const string MallctlArenasLookupBadPointer = "mallctl-arenas-lookup-bad-pointer";
    internal const string MallctlDisguisedIndexSuffix = "mallctl-disguised-index-suffix";
    internal const string MallctlDisguisedIndexSign = "mallctl-disguised-index-sign";
    internal const string MallctlDisguisedIndexSpace = "mallctl-disguised-index-space";
    internal const string MallctlDisguisedIndexNul = "mallctl-disguised-index-nul";
    internal const string MallctlBadKeys = "mallctl-bad-keys";

    internal static void Register(Dictionary<string, Action> all)
    {
        all[MallctlArenasCreateSet] = () => Refused("MallctlKeys.Arenas.Create.Set(0u)", () => MallctlKeys.Arenas.Create.Set(0u));
        all[MallctlArenasCreateCommand] = () => Refused("Jem.MallctlCommand(\"arenas.create\")", () => Jem.MallctlCommand("arenas.create"));
        all[MallctlTcacheFlush] = () => Refused("Jem.SetMallctl(\"tcache.flush\", 0)", () => Jem.SetMallctl("tcache.flush", 0));
        all[MallctlTcacheDestroy] = () => Refused("Jem.SetMallctl(\"tcache.destroy\", 0)", () => Jem.SetMallctl("tcache.destroy", 0));
        all[MallctlHooksRemove] = () => Refused("Jem.SetMallctl(\"experimental.hooks.remove\", (nint)0)", () => Jem.SetMallctl("experimental.hooks.remove", (nint)0));
        all[MallctlExtentHooks] = () => Refused("Jem.SetMallctl(\"arena.0.extent_hooks\", (nint)0)", () =>
        {
            Jem.SetMallctl("arena.0.extent_hooks", (nint)0);
            // If it was accepted, make jemalloc use the hooks.
            for (int i = 0; i < 64; i++)
            {
                using var array = new SafeArray<long>(1 << 20);
            }
        });
        all[MallctlTcacheCreateCommand] = () => Refused("Jem.MallctlCommand(\"tcache.create\")", () => Jem.MallctlCommand("tcache.create"));
        all[MallctlArenasLookupRead] = () => Refused("Jem.GetMallctl<uint>(\"arenas.lookup\") (no pointer written)", () => Jem.GetMallctl<uint>("arenas.lookup"));
        all[MallctlArenasLookupBadPointer] = () => Refused("Jem.SetMallctl(\"arenas.lookup\", (nint)1)", () => Jem.SetMallctl("arenas.lookup", (nint)1));
        all[MallctlDisguisedIndexSuffix] = () => DisguisedIndex("arena.{0}x.reset");
        all[MallctlDisguisedIndexSign] = () => DisguisedIndex("arena.+{0}.reset");
        all[MallctlDisguisedIndexSpace] = () => DisguisedIndex("arena. {0}.destroy");
        all[MallctlDisguisedIndexNul] = () => DisguisedIndex("arena.{0}.reset\0");
        all[MallctlBadKeys] = BadKeys;
    }

    // jemalloc reads an index component with strtoumax and ignores what follows the digits, and the
    // name only up to a NUL: each of these names addresses the JemArena's arena.
    private static void DisguisedIndex(string format)
    {
        var arena = new JemArena();
        SafeArray<long> array = arena.CreateArray<long>(1000);
        array.Fill(7);
        string name = string.Format(System.Globalization.CultureInfo.InvariantCulture, format, arena.Index);
        string call = $"Jem.MallctlCommand(\"{name.Replace("\0", "\\0", StringComparison.Ordinal)}\")";
        Check.Throws<MallctlException>(call, () => Jem.MallctlCommand(name));
        unsafe
        {
            Check.Throws<MallctlException>($"raw {call}", () => Jem.Mallctl(name, null, null, null, 0));
        }

        if (array.IsValid)
        {
            SafeArray<long> fresh = arena.CreateArray<long>(1000);
            fresh.Fill(9);
            Check.Equal(7L * 1000, array.VectorSum(), $"after {call}: the live array is not aliased by a new one");
            fresh.Dispose();
            array.Dispose();
        }

        try
        {
            arena.Dispose();
        }
        catch (InvalidOperationException e)
        {
            Check.Info($"INFO arena.Dispose: {e.Message}");
        }

        Churn();
    }

    internal static void Report(string call, Exception e)
    {
        Check.Info($"RESULT {call}: {e.GetType().Name}: {e.Message}");
        if (e is MallctlException or ArgumentException or InvalidOperationException or NotSupportedException)
        {
            Check.Pass();
        }
        else
        {
            Check.Fail(call, $"threw {e.GetType().Name}, not a MallctlException or another conventional refusal");
        }
    }

    private static void Refused(string call, Action action)
    {
        try
        {
            action();
        }
        catch (Exception e)
        {
            Report(call, e);
            return;
        }

        Check.Info($"RESULT {call}: returned normally");
        Check.Fail(call, "returned normally; a key with pointer, void or NULL-length semantics the raw API cannot serve safely must be refused with a MallctlException");
    }

    private static void BadKeys()
    {
        foreach ((string call, Action action) in new (string, Action)[]
        {
            ("GetMallctl<int>(\"no.such.key\")", () => Jem.GetMallctl<int>("no.such.key")),
            ("GetMallctl<byte-sized bool>(\"stats.allocated\")", () => Jem.GetMallctl<bool>("stats.allocated")),
            ("SetMallctl(\"version\", 1)", () => Jem.SetMallctl("version", (nint)1)),
            ("SetMallctl(\"opt.narenas\", 1u)", () => Jem.SetMallctl("opt.narenas", 1u)),
            ("GetMallctlString(\"stats.allocated\") (not a string)", () => Jem.GetMallctlString("stats.allocated")),
            ("GetMallctlString(\"arenas.bin.0.size\") (not a string)", () => Jem.GetMallctlString("arenas.bin.0.size")),
            ("SetMallctlString(\"version\", \"x\")", () => Jem.SetMallctlString("version", "x")),
            ("GetMallctlString(\"\")", () => Jem.GetMallctlString(string.Empty)),
            ("MallctlCommand(\"arena.0.reset\") (automatic arena)", () => Jem.MallctlCommand("arena.0.reset")),
            ("MallctlCommand(\"arena.4096.destroy\") (all arenas)", () => Jem.MallctlCommand("arena.4096.destroy")),
            ("MallctlCommand(\"arena.99999.purge\")", () => Jem.MallctlCommand("arena.99999.purge")),
            ("MallctlKeys.Arena(99999).DirtyDecayMs.Get()", () => MallctlKeys.Arena(99999).DirtyDecayMs.Get()),
            ("MallctlKeys.Arena(99999).Reset.Run()", () => MallctlKeys.Arena(99999).Reset.Run()),
            ("MallctlKeys.Thread.Arena.Set(99999)", () => MallctlKeys.Thread.Arena.Set(99999)),
            ("GetMallctl<nint>(\"thread.allocatedp\")", () => Jem.GetMallctl<nint>("thread.allocatedp")),
        })
        {
            try
            {
                action();
                Check.Info($"RESULT {call}: returned normally");
            }
            catch (Exception e)
            {
                Report(call, e);
            }
        }

        Churn();
    }

    // Allocates and frees a while: a corrupted heap tends to crash here rather than later.
    internal static void Churn()
    {
        for (int i = 0; i < 2000; i++)
        {
            using var array = new SafeArray<long>(1 + (i % 700));
            array.Fill(i);
            var buffer = new FixedBuffer<int>(1 + (i % 300));
            buffer.Fill(i);
            buffer.Free();
        }

        Check.Pass();
    }
}
