namespace jemalloc.Tests.ChildProcess.Adversarial;

/// <summary>
/// Dangerous mallctl keys through the typed keys and the raw <c>Jem.*Mallctl</c> calls: each must
/// throw a clear .NET exception (or, for arenas the library owns, be handled so that the library's
/// structures stay consistent), never crash the process. One scenario per call: each runs in its own
/// child process, so one crash fails one test.
/// </summary>
internal static class MallctlMisuseScenarios
{
    internal static void Register(Dictionary<string, Action> all)
    {
        all["mallctl-arenas-create-set"] = () => Refused("MallctlKeys.Arenas.Create.Set(0u)", () => MallctlKeys.Arenas.Create.Set(0u));
        all["mallctl-arenas-create-command"] = () => Refused("Jem.MallctlCommand(\"arenas.create\")", () => Jem.MallctlCommand("arenas.create"));
        all["mallctl-tcache-flush"] = () => Refused("Jem.SetMallctl(\"tcache.flush\", 0)", () => Jem.SetMallctl("tcache.flush", 0));
        all["mallctl-tcache-destroy"] = () => Refused("Jem.SetMallctl(\"tcache.destroy\", 0)", () => Jem.SetMallctl("tcache.destroy", 0));
        all["mallctl-hooks-remove"] = () => Refused("Jem.SetMallctl(\"experimental.hooks.remove\", (nint)0)", () => Jem.SetMallctl("experimental.hooks.remove", (nint)0));
        all["mallctl-extent-hooks"] = () => Refused("Jem.SetMallctl(\"arena.0.extent_hooks\", (nint)0)", () =>
        {
            Jem.SetMallctl("arena.0.extent_hooks", (nint)0);
            // If it was accepted, make jemalloc use the hooks.
            for (int i = 0; i < 64; i++)
            {
                using var array = new SafeArray<long>(1 << 20);
            }
        });
        all["mallctl-arena-reset-owned"] = () => OwnedArena(destroy: false);
        all["mallctl-arena-destroy-owned"] = () => OwnedArena(destroy: true);
        all["mallctl-thread-arena-then-reset"] = ThreadArenaThenReset;
        all["mallctl-bad-keys"] = BadKeys;
        all["mallctl-arenas-lookup-read"] = () => Refused("Jem.GetMallctl<uint>(\"arenas.lookup\") (no pointer written)", () => Jem.GetMallctl<uint>("arenas.lookup"));
        all["mallctl-tcache-create-command"] = () => Refused("Jem.MallctlCommand(\"tcache.create\")", () => Jem.MallctlCommand("tcache.create"));
        all["mallctl-arenas-lookup-bad-pointer"] = () => Refused("Jem.SetMallctl(\"arenas.lookup\", (nint)1)", () => Jem.SetMallctl("arenas.lookup", (nint)1));
    }

    private static void Report(string call, Exception e)
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

    private static void OwnedArena(bool destroy)
    {
        var arena = new JemArena();
        FixedBuffer<long> buffer = arena.CreateBuffer<long>(512);
        SafeArray<long> array = arena.CreateArray<long>(512);
        buffer.Fill(1);
        array.Fill(2);
        string call = $"MallctlKeys.Arena(jemArena.Index).{(destroy ? "Destroy" : "Reset")}.Run()";
        bool refused;
        try
        {
            if (destroy)
            {
                MallctlKeys.Arena(arena.Index).Destroy.Run();
            }
            else
            {
                MallctlKeys.Arena(arena.Index).Reset.Run();
            }

            refused = false;
            Check.Info($"RESULT {call}: returned normally");
        }
        catch (Exception e)
        {
            Report(call, e);
            refused = true;
        }

        if (refused)
        {
            Check.True(buffer.IsValid && array.IsValid, $"{call} refused: the arena's structures are still valid");
            Check.True(buffer.VectorSum() == 512 && array.VectorSum() == 1024, $"{call} refused: contents intact");
        }
        else
        {
            // Handled: the library's structures must have been invalidated, as by JemArena.Reset.
            Check.True(!buffer.IsValid && !array.IsValid, $"{call} accepted: the arena's structures must be invalidated", "they stay IsValid over freed memory");
        }

        if (!destroy || refused)
        {
            // New structures in the arena must not alias the old ones.
            try
            {
                FixedBuffer<long> fresh = arena.CreateBuffer<long>(512);
                SafeArray<long> freshArray = arena.CreateArray<long>(512);
                fresh.Fill(3);
                freshArray.Fill(4);
                if (buffer.IsValid)
                {
                    buffer.Fill(1);
                    array.Fill(2);
                }

                Check.True(fresh.VectorSum() == 3 * 512 && freshArray.VectorSum() == 4 * 512, $"{call}: new structures do not alias old ones");
                fresh.Free();
                freshArray.Dispose();
            }
            catch (ObjectDisposedException e)
            {
                Check.Info($"INFO arena unusable afterwards: {e.Message}");
            }
        }

        // Freeing everything afterwards: no double free, no crash.
        if (buffer.IsValid)
        {
            Check.NoThrow("Free the buffer", buffer.Free);
        }

        Check.NoThrow("Dispose the array", array.Dispose);
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

    private static void ThreadArenaThenReset()
    {
        var arena = new JemArena();
        string call = "MallctlKeys.Thread.Arena.Set(jemArena.Index)";
        bool moved;
        try
        {
            MallctlKeys.Thread.Arena.Set(arena.Index);
            moved = true;
            Check.Info($"RESULT {call}: returned normally");
        }
        catch (Exception e)
        {
            Report(call, e);
            moved = false;
        }

        // Default-option structures made on this thread now (in the arena if the move was accepted).
        using var array = new SafeArray<long>(4096);
        var buffer = new FixedBuffer<long>(4096);
        array.Fill(5);
        buffer.Fill(6);
        try
        {
            arena.Reset();
        }
        catch (InvalidOperationException e)
        {
            Check.Info($"INFO Reset: {e.Message}");
        }

        // Whatever happened, default-option structures must not be freed under their owners.
        Check.True(array.IsValid && buffer.IsValid, "default-option structures survive a reset of an arena the thread was moved to");
        var victims = new List<SafeArray<long>>();
        for (int i = 0; i < 8; i++)
        {
            SafeArray<long> victim = arena.IsDisposed ? new SafeArray<long>(4096) : arena.CreateArray<long>(4096);
            victim.Fill(7);
            victims.Add(victim);
        }

        if (array.IsValid && buffer.IsValid)
        {
            Check.True(array.VectorSum() == 5 * 4096 && buffer.VectorSum() == 6 * 4096, "default-option structures not aliased by new arena allocations");
        }

        foreach (SafeArray<long> victim in victims)
        {
            victim.Dispose();
        }

        if (moved)
        {
            try
            {
                MallctlKeys.Thread.Arena.Set(0);
            }
            catch (Exception e)
            {
                Check.Info($"INFO moving back: {e.Message}");
            }
        }

        if (buffer.IsValid)
        {
            buffer.Free();
        }

        array.Dispose();
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
    private static void Churn()
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
