using System.Globalization;
using System.Reflection;

namespace jemalloc.PerfCompare;

/// <summary>
/// A worker process (<c>jemalloc.PerfCompare worker</c>): the measurements against the library this
/// build was compiled with, run one request at a time on the driver's command, one line each way.
/// It announces itself with <c>ready TAB description</c>; then <c>run NAME OPERATIONS</c> answers
/// <c>ok WALL CPU JITTED</c> (ns per operation on the wall clock and in the worker thread's CPU time, -1 where there is none, and the methods its JIT has compiled), <c>wrong MESSAGE</c> (a result check failed) or <c>fail MESSAGE</c>, and
/// <c>quit</c> (or the end of its input) ends it.
/// </summary>
internal static class Worker
{
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
        if (words is not ["run", string name, string count]
            || !int.TryParse(count, NumberStyles.None, CultureInfo.InvariantCulture, out int operations) || operations < 1)
        {
            return $"fail the worker does not understand '{string.Join(' ', words)}'";
        }

        try
        {
            // Garbage from an earlier request (the pool's owners, the writers) is collected before the clock starts, not during.
            GC.Collect();
            GC.WaitForPendingFinalizers();
            GC.Collect();
            (double wall, double cpu) = workloads.Run(name, operations);
            return string.Create(CultureInfo.InvariantCulture,
                $"ok {wall / operations:R} {(cpu < 0 ? -1 : cpu / operations):R} {System.Runtime.JitInfo.GetCompiledMethodCount(currentThread: false)}");
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
