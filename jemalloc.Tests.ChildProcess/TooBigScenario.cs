using System.Diagnostics;
using System.Globalization;
using jemalloc.Memory;

namespace jemalloc.Tests.ChildProcess;

/// <summary>
/// Creates a structure too big for the memory the process can get and reports what happened:
/// <c>OOM &lt;milliseconds&gt; &lt;message&gt;</c>, or <c>CREATED</c>. Run in a child process so a regression
/// (the kernel's OOM killer) ends the child, not the test run.
/// </summary>
internal static class TooBigScenario
{
    /// <param name="structure">safe-array, huge-array or fixed-buffer (of <see cref="long"/>).</param>
    /// <param name="length">Elements.</param>
    /// <param name="fakeAvailable">If given, /proc/meminfo is made to say this much is available (no swap, no cgroup).</param>
    internal static int Run(string structure, long length, long? fakeAvailable)
    {
        if (fakeAvailable is { } bytes)
        {
            string meminfo = string.Create(CultureInfo.InvariantCulture, $"MemTotal: {bytes / 512} kB\nMemAvailable: {bytes / 1024} kB\nSwapFree: 0 kB\n");
            SystemMemory.FileReader = path => path == "/proc/meminfo" ? meminfo : null;
        }

        var stopwatch = Stopwatch.StartNew();
        try
        {
            switch (structure)
            {
                case "safe-array":
                    new SafeArray<long>(checked((int)length)).Dispose();
                    break;
                case "huge-array":
                    new HugeArray<long>(length).Dispose();
                    break;
                case "fixed-buffer":
                    new FixedBuffer<long>(checked((int)length)).Free();
                    break;
                default:
                    Console.Error.WriteLine($"unknown structure {structure}");
                    return 2;
            }

            Console.WriteLine("CREATED");
        }
        catch (OutOfMemoryException exception)
        {
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"OOM {stopwatch.ElapsedMilliseconds} {exception.Message}"));
        }

        return 0;
    }
}
