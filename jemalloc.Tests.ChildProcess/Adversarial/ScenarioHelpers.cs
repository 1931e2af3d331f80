namespace jemalloc.Tests.ChildProcess.Adversarial;

/// <summary>
/// Helpers the scenarios of several failure classes and structure families share: counting the
/// elements that differ from a value, running an action on threads of its own, the memory the
/// process can get.
/// </summary>
internal static class ScenarioHelpers
{
    internal static long CountNot<T>(ReadOnlySpan<T> span, T value)
        where T : IEquatable<T>
    {
        long bad = 0;
        foreach (T item in span)
        {
            if (!item.Equals(value))
            {
                bad++;
            }
        }

        return bad;
    }

    internal static long CountNot<T>(Span<T> span, T value)
        where T : IEquatable<T> => CountNot((ReadOnlySpan<T>)span, value);

    internal static long CountNot<T>(T[] array, T value)
        where T : IEquatable<T> => CountNot((ReadOnlySpan<T>)array, value);

    internal static long CountNot<T>(HugeArray<T> array, T value)
        where T : unmanaged, IEquatable<T>
    {
        long bad = 0;
        for (long i = 0; i < array.Length; i++)
        {
            bad += array[i].Equals(value) ? 0 : 1;
        }

        return bad;
    }

    internal static void OnThreads(int count, Action<int> action)
    {
        var threads = Enumerable.Range(0, count).Select(t => new Thread(() =>
        {
            try
            {
                action(t);
            }
            catch (Exception e)
            {
                Check.Fail($"thread {t}", $"{e.GetType().Name}: {e.Message}");
            }
        })).ToArray();
        foreach (Thread thread in threads)
        {
            thread.Start();
        }

        foreach (Thread thread in threads)
        {
            thread.Join();
        }
    }

    internal static long PhysicalPlusSwap()
    {
        long total = 0;
        foreach (string line in File.ReadLines("/proc/meminfo"))
        {
            if (line.StartsWith("MemTotal:", StringComparison.Ordinal) || line.StartsWith("SwapTotal:", StringComparison.Ordinal))
            {
                total += long.Parse(line.Split(' ', StringSplitOptions.RemoveEmptyEntries)[1], System.Globalization.CultureInfo.InvariantCulture) * 1024;
            }
        }

        return total;
    }
}
