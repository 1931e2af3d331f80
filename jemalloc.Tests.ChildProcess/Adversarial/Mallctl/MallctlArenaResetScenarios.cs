using static jemalloc.Tests.ChildProcess.Adversarial.MallctlBadInputScenarios;

namespace jemalloc.Tests.ChildProcess.Adversarial;

/// <summary>
/// Failure class: an arena reset or destroy through the raw mallctl keys: of an arena the library owns,
/// after a thread was moved onto an arena, of an arena a thread was moved onto that the library does not
/// own. The library's structures are never freed under their owners: the call is refused with a clear
/// exception or handled so that the structures stay consistent; never a crash.
/// </summary>
internal static class MallctlArenaResetScenarios
{
    internal const string MallctlArenaResetOwned = "mallctl-arena-reset-owned";
    internal const string MallctlArenaDestroyOwned = "mallctl-arena-destroy-owned";
    internal const string MallctlThreadArenaThenReset = "mallctl-thread-arena-then-reset";
    internal const string MallctlThreadArenaUnownedThenReset = "mallctl-thread-arena-unowned-then-reset";
    internal const string MallctlThreadArenaUnownedThenDestroy = "mallctl-thread-arena-unowned-then-destroy";

    internal static void Register(Dictionary<string, Action> all)
    {
        all[MallctlArenaResetOwned] = () => OwnedArena(destroy: false);
        all[MallctlArenaDestroyOwned] = () => OwnedArena(destroy: true);
        all[MallctlThreadArenaThenReset] = ThreadArenaThenReset;
        all[MallctlThreadArenaUnownedThenReset] = () => ThreadArenaUnownedThenReset(destroy: false);
        all[MallctlThreadArenaUnownedThenDestroy] = () => ThreadArenaUnownedThenReset(destroy: true);
    }

    // A thread moved onto an arena made with arenas.create allocates default-option structures there,
    // which no flag ties to the arena: a reset or destroy through mallctl must be refused.
    private static void ThreadArenaUnownedThenReset(bool destroy)
    {
        uint unowned = MallctlKeys.Arenas.Create.Get();
        uint before = JemTuning.ThreadArena;
        JemTuning.ThreadArena = unowned;
        var array = new SafeArray<long>(100);
        var buffer = new FixedBuffer<int>(50);
        array.Fill(5);
        buffer.Fill(3);
        JemTuning.ThreadArena = before;
        string call = $"MallctlKeys.Arena(unowned).{(destroy ? "Destroy" : "Reset")}.Run() after thread.arena moved a thread there";
        Check.Throws<MallctlException>(call, () =>
        {
            if (destroy)
            {
                MallctlKeys.Arena(unowned).Destroy.Run();
            }
            else
            {
                MallctlKeys.Arena(unowned).Reset.Run();
            }
        });
        var fresh = new SafeArray<long>(100, new AllocationOptions(MallocxFlags.Arena(unowned)));
        fresh.Fill(9);
        Check.Equal(5L * 100, array.VectorSum(), $"after {call}: the default-option array is intact");
        Check.Equal(3 * 50, buffer.VectorSum(), $"after {call}: the default-option buffer is intact");
        fresh.Dispose();
        array.Dispose();
        buffer.Free();
        Churn();
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
}
