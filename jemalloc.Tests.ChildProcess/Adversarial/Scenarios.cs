namespace jemalloc.Tests.ChildProcess.Adversarial;

/// <summary>
/// The adversarial scenarios, by name: each uses the public API only, the way a careless or hostile
/// user would, and prints <c>FAIL</c> lines for what the library got wrong, then <c>DONE</c>. They
/// run in a child process so that a crash, a hang or an OOM kill fails one test instead of the run.
/// </summary>
internal static class Scenarios
{
    private static readonly Dictionary<string, Action> All = new(StringComparer.Ordinal);

    static Scenarios()
    {
        BufferLifetimeMisuseScenarios.Register(All);
        BufferDisposeRaceScenarios.Register(All);
        BufferTornCopyScenarios.Register(All);
        BufferBadInputScenarios.Register(All);
        BufferCheckedModeScenarios.Register(All);
        BufferJitShapeScenarios.Register(All);
        ArenaLifetimeMisuseScenarios.Register(All);
        ArenaResetScenarios.Register(All);
        ArenaBadInputScenarios.Register(All);
        ArenaCheckedModeScenarios.Register(All);
        RecordDisposeRaceScenarios.Register(All);
        RecordArenaResetScenarios.Register(All);
        RecordTornCopyScenarios.Register(All);
        RecordConcurrentUseScenarios.Register(All);
        RecordReentrancyScenarios.Register(All);
        RecordBadInputScenarios.Register(All);
        IoLifetimeMisuseScenarios.Register(All);
        IoDisposeRaceScenarios.Register(All);
        IoArenaResetScenarios.Register(All);
        IoConcurrentUseScenarios.Register(All);
        IoCheckedModeScenarios.Register(All);
        AddOnLifetimeMisuseScenarios.Register(All);
        AddOnArenaResetScenarios.Register(All);
        AddOnDisposeRaceScenarios.Register(All);
        AddOnBadInputScenarios.Register(All);
        MallctlBadInputScenarios.Register(All);
        MallctlArenaResetScenarios.Register(All);
        NativeCacheAttackInChildScenarios.Register(All);
    }

    internal static int Run(string name)
    {
        if (name == "list")
        {
            foreach (string key in All.Keys.Order(StringComparer.Ordinal))
            {
                Console.WriteLine(key);
            }

            return 0;
        }

        if (!All.TryGetValue(name, out Action? scenario))
        {
            Console.Error.WriteLine($"unknown adversarial scenario '{name}' (try 'list')");
            return 2;
        }

        StartMemoryWatchdog(name);
        Check.Info($"SCENARIO {name} checked={AllocationLedger.CheckedMode}");
        try
        {
            scenario();
        }
        catch (Exception e)
        {
            Check.Fail(name, $"escaped {e.GetType().Name}: {e.Message}{Environment.NewLine}{e.StackTrace}");
        }

        return Check.Finish(name);
    }

    // The machine is shared: a scenario whose allocation starts to fill more memory than any of
    // them needs (a too-big array being zero-filled towards an OOM kill) is stopped at once.
    private const long ResidentLimit = 3L << 30;

    private static void StartMemoryWatchdog(string name)
    {
        var watchdog = new Thread(() =>
        {
            while (true)
            {
                Thread.Sleep(10);
                long resident = ResidentBytes();
                if (resident > ResidentLimit)
                {
                    Check.Fail(name, $"the process grew to {resident:N0} resident bytes (limit {ResidentLimit:N0}): it is filling memory it should have refused; killed by the watchdog");
                    Console.Out.Flush();
                    System.Diagnostics.Process.GetCurrentProcess().Kill();
                }
            }
        })
        { IsBackground = true, Name = "memory watchdog" };
        watchdog.Start();
    }

    private static long ResidentBytes()
    {
        // statm: size resident shared ... in pages.
        string[] fields = File.ReadAllText("/proc/self/statm").Split(' ');
        return long.Parse(fields[1], System.Globalization.CultureInfo.InvariantCulture) * Environment.SystemPageSize;
    }
}
