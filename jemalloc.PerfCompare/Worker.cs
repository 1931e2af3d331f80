using System.Diagnostics;
using System.Globalization;
using System.Reflection;
using System.Runtime;

namespace jemalloc.PerfCompare;

/// <summary>
/// A worker process (<c>jemalloc.PerfCompare worker</c>): the measurements against the library this
/// build was compiled with, run one request at a time on the driver's command, one line each way.
/// It announces itself with <c>ready TAB description</c>; then <c>run NAME OPERATIONS</c> answers
/// <c>ok WALL CPU JITTED</c> (ns per operation on the wall clock and in the worker thread's CPU time,
/// -1 where there is none, and the methods its JIT has compiled), <c>wrong MESSAGE</c> (a result check
/// failed) or <c>fail MESSAGE</c>; <c>warm NAME OPERATIONS CALLS</c> warms a measurement up (see
/// <see cref="WarmUp"/>) and answers as <c>run</c> does for one run after it; <c>quit</c> (or the end
/// of its input) ends it.
/// </summary>
internal static class Worker
{
    // The JIT counts as done with a measurement once QuietRounds pauses, each with the calls after it
    // (see SettleRoundTime), passed with nothing compiled, or after MaxSettleRounds of them: tiered compilation counts
    // calls only after 100 ms without new unoptimized code, promotes a method after 30 calls and compiles
    // it on a background thread, with dynamic PGO twice (instrumented code first, then the optimized
    // code); the pauses give that thread the core, which a worker running flat out on a busy machine can
    // hold it off from for seconds (a SafeArray sum loop ran 1.5x slower for 300 calls in a row). The
    // measured loops are promoted within the first rounds; what the JIT may still compile after
    // MaxSettleRounds is code called a few times per call (a writer's growth and Dispose, the checks).
    private const int SettleCalls = 32;
    private const int MinimumSettleCalls = 8;
    private const int QuietRounds = 2;
    private const int MaxSettleRounds = 8;
    private static readonly TimeSpan SettlePause = TimeSpan.FromMilliseconds(100);

    // A settle round's calls stop at SettleCalls or after this long, whichever comes first (at least
    // MinimumSettleCalls): a call of a writer takes 7 ms, and its hot code is promoted within its first calls.
    private static readonly TimeSpan SettleRoundTime = TimeSpan.FromMilliseconds(100);
    private static readonly TimeSpan SettleLimit = TimeSpan.FromSeconds(120);

    internal static int Run(TextReader input, TextWriter output)
    {
        using var workloads = new Workloads();
        output.WriteLine($"ready\t{Describe()}");
        output.Flush();
        while (input.ReadLine() is string line)
        {
            string[] words = line.Split(' ', StringSplitOptions.RemoveEmptyEntries);
            if (words is ["quit"])
            {
                break;
            }

            output.WriteLine(Answer(workloads, words));
            output.Flush();
        }

        return 0;
    }

    private static string Answer(Workloads workloads, string[] words)
    {
        int warmCalls = 0;
        bool warm = words is ["warm", _, _, _];
        if (!(words is ["run", _, _] || warm)
            || !int.TryParse(words[2], NumberStyles.None, CultureInfo.InvariantCulture, out int operations) || operations < 1
            || (warm && !int.TryParse(words[3], NumberStyles.None, CultureInfo.InvariantCulture, out warmCalls)))
        {
            return $"fail the worker does not understand '{string.Join(' ', words)}'";
        }

        try
        {
            string name = words[1];
            if (warm && !WarmUp(workloads, name, operations, warmCalls))
            {
                return $"fail the JIT was still compiling after {SettleLimit.TotalSeconds:F0} s of {name}: the machine is too busy to measure on";
            }

            // Garbage from an earlier request (the pool's owners, the writers) is collected before the clock starts, not during.
            GC.Collect();
            GC.WaitForPendingFinalizers();
            GC.Collect();
            (double wall, double cpu) = workloads.Run(name, operations);
            return string.Create(CultureInfo.InvariantCulture,
                $"ok {wall / operations:R} {(cpu < 0 ? -1 : cpu / operations):R} {JitInfo.GetCompiledMethodCount(currentThread: false)}");
        }
        catch (ResultCheckException e)
        {
            return $"wrong {OneLine(e.Message)}";
        }
        catch (Exception e) when (e is ArgumentException or InvalidOperationException or OutOfMemoryException or DllNotFoundException)
        {
            return $"fail {OneLine(e.ToString())}";
        }
    }

    // Runs `calls` runs of `operations` operations, then goes on until the JIT is done with the
    // measurement (see SettleCalls); false if it was not within SettleLimit.
    private static bool WarmUp(Workloads workloads, string name, int operations, int calls)
    {
        for (int i = 0; i < calls; i++)
        {
            workloads.Run(name, operations);
        }

        var limit = Stopwatch.StartNew();
        long compiled = JitInfo.GetCompiledMethodCount(currentThread: false);
        for (int quiet = 0, round = 0; quiet < QuietRounds && round < MaxSettleRounds; round++)
        {
            if (limit.Elapsed > SettleLimit)
            {
                return false;
            }

            Thread.Sleep(SettlePause);
            var roundTime = Stopwatch.StartNew();
            for (int i = 0; i < SettleCalls && (i < MinimumSettleCalls || roundTime.Elapsed < SettleRoundTime); i++)
            {
                workloads.Run(name, operations);
            }

            long now = JitInfo.GetCompiledMethodCount(currentThread: false);
            quiet = now == compiled ? quiet + 1 : 0;
            compiled = now;
        }

        return true;
    }

    // The library this worker was compiled against, as it was loaded: file, version, build id, and jemalloc's version.
    private static string Describe()
    {
        Assembly library = typeof(FixedBuffer<>).Assembly;
        string version = library.GetCustomAttribute<AssemblyInformationalVersionAttribute>()?.InformationalVersion ?? "?";
        string jemalloc = Jem.GetMallctlString("version") ?? "?";
        return $"{library.Location} (jemalloc.Api {version}, build {library.ManifestModule.ModuleVersionId.ToString()[..8]}; jemalloc {jemalloc}; pid {Environment.ProcessId})";
    }

    private static string OneLine(string text) => text.ReplaceLineEndings(" | ");
}
