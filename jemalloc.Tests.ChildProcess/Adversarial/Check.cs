using System.Diagnostics;

namespace jemalloc.Tests.ChildProcess.Adversarial;

/// <summary>
/// The adversarial scenarios' assertions, without a test framework: each failure prints a
/// <c>FAIL</c> line (the parent test fails on any), each scenario ends with <c>DONE</c> when it ran to
/// its end (the parent fails without it: a crash, a hang killed by the timeout, or an escaped exception).
/// </summary>
internal static class Check
{
    private static int s_failures;
    private static int s_passes;
    private static readonly Lock OutputLock = new();

    internal static int Failures => Volatile.Read(ref s_failures);

    internal static void Fail(string what, string detail)
    {
        Interlocked.Increment(ref s_failures);
        lock (OutputLock)
        {
            Console.WriteLine($"FAIL {what}: {detail}");
            Console.Out.Flush();
        }
    }

    internal static void Info(string line)
    {
        lock (OutputLock)
        {
            Console.WriteLine(line);
            Console.Out.Flush();
        }
    }

    internal static void Pass() => Interlocked.Increment(ref s_passes);

    internal static void True(bool condition, string what, string detail = "was false")
    {
        if (condition)
        {
            Pass();
        }
        else
        {
            Fail(what, detail);
        }
    }

    internal static void Equal<T>(T expected, T actual, string what)
    {
        if (EqualityComparer<T>.Default.Equals(expected, actual))
        {
            Pass();
        }
        else
        {
            Fail(what, $"expected {expected}, got {actual}");
        }
    }

    /// <summary>Expects an exception of type <typeparamref name="TException"/> or a subclass.</summary>
    internal static void Throws<TException>(string what, Action action)
        where TException : Exception
    {
        try
        {
            action();
        }
        catch (TException)
        {
            Pass();
            return;
        }
        catch (Exception e)
        {
            Fail(what, $"expected {typeof(TException).Name}, got {e.GetType().Name}: {e.Message}");
            return;
        }

        Fail(what, $"expected {typeof(TException).Name}, returned normally");
    }

    /// <summary>Expects exactly <typeparamref name="TException"/> (e.g. an InvalidOperationException that is not an ObjectDisposedException).</summary>
    internal static void ThrowsExactly<TException>(string what, Action action)
        where TException : Exception
    {
        try
        {
            action();
        }
        catch (Exception e) when (e.GetType() == typeof(TException))
        {
            Pass();
            return;
        }
        catch (Exception e)
        {
            Fail(what, $"expected exactly {typeof(TException).Name}, got {e.GetType().Name}: {e.Message}");
            return;
        }

        Fail(what, $"expected {typeof(TException).Name}, returned normally");
    }

    /// <summary>For code that cannot be a lambda (ref structs): expects exactly <typeparamref name="TException"/> to have been caught.</summary>
    internal static void Caught<TException>(string what, Exception? caught)
        where TException : Exception
    {
        if (caught is null)
        {
            Fail(what, $"expected {typeof(TException).Name}, returned normally");
        }
        else if (caught.GetType() != typeof(TException))
        {
            Fail(what, $"expected exactly {typeof(TException).Name}, got {caught.GetType().Name}: {caught.Message}");
        }
        else
        {
            Pass();
        }
    }

    internal static void NoThrow(string what, Action action)
    {
        try
        {
            action();
            Pass();
        }
        catch (Exception e)
        {
            Fail(what, $"threw {e.GetType().Name}: {e.Message}");
        }
    }

    /// <summary>
    /// Runs <paramref name="action"/> until the structure it acts on is no longer in use: a refusal is
    /// an <see cref="InvalidOperationException"/> (not an <see cref="ObjectDisposedException"/>), after
    /// which the thread yields and tries again. Any other exception goes to the caller.
    /// </summary>
    /// <returns>How many times it was refused.</returns>
    internal static int UntilNotRefused(Action action)
    {
        int refused = 0;
        while (true)
        {
            try
            {
                action();
                return refused;
            }
            catch (InvalidOperationException e) when (e is not ObjectDisposedException)
            {
                refused++;
                Thread.Yield();
            }
        }
    }

    /// <summary>
    /// Runs <paramref name="bodies"/> on dedicated threads, each in a loop until its iteration count
    /// or the time budget (counted from when every thread has started) is used up, and at least once;
    /// an exception escaping a body is a failure. Returns the iterations each ran.
    /// </summary>
    internal static long[] Race(string what, TimeSpan budget, int iterations, params Action<int>[] bodies) =>
        RaceUntil(what, budget, firstBodyAtLeast: 0, iterations, bodies);

    /// <summary>
    /// As <see cref="Race"/>, but every body goes on past the budget (up to eight budgets) until the
    /// first body has run <paramref name="firstBodyAtLeast"/> times, so that a loaded machine slows
    /// the race down instead of leaving it too short to have happened.
    /// </summary>
    internal static long[] RaceUntil(string what, TimeSpan budget, long firstBodyAtLeast, int iterations, params Action<int>[] bodies)
    {
        var counts = new long[bodies.Length];
        return RaceUntil(what, budget, () => Volatile.Read(ref counts[0]) >= firstBodyAtLeast, iterations, counts, bodies);
    }

    /// <summary>
    /// As <see cref="Race"/>, but every body goes on past the budget (up to eight budgets) until
    /// <paramref name="met"/> says the sides have met (for example: a reader saw a freed structure),
    /// so that a loaded machine, which may run the threads one after the other, slows the race down
    /// instead of leaving it without the meeting it exists for. The caller still asserts the meeting.
    /// </summary>
    internal static long[] RaceUntilMet(string what, TimeSpan budget, Func<bool> met, int iterations, params Action<int>[] bodies) =>
        RaceUntil(what, budget, met, iterations, new long[bodies.Length], bodies);

    private static long[] RaceUntil(string what, TimeSpan budget, Func<bool> done, int iterations, long[] counts, Action<int>[] bodies)
    {
        TimeSpan cap = budget * 8;
        var stopwatch = new Stopwatch();
        // The clock starts when every thread is at the line: on a loaded machine starting threads can
        // take longer than the budget, which must not leave a body without a turn.
        using var start = new Barrier(bodies.Length, _ => stopwatch.Start());
        var threads = new Thread[bodies.Length];
        for (int t = 0; t < bodies.Length; t++)
        {
            int index = t;
            threads[t] = new Thread(() =>
            {
                start.SignalAndWait();
                try
                {
                    // Every body runs at least once: a race in which one side never ran proves nothing.
                    for (int i = 0; i < iterations && (i == 0 || stopwatch.Elapsed < budget || (!done() && stopwatch.Elapsed < cap)); i++)
                    {
                        bodies[index](i);
                        counts[index]++;
                    }
                }
                catch (Exception e)
                {
                    Fail(what, $"thread {index} threw {e.GetType().Name}: {e.Message}{Environment.NewLine}{e.StackTrace}");
                }
            })
            { IsBackground = true, Name = $"{what}#{t}" };
            threads[t].Start();
        }

        foreach (Thread thread in threads)
        {
            thread.Join();
        }

        return counts;
    }

    /// <summary>Prints the summary and <c>DONE</c>; the exit code is 0 (the parent reads the lines).</summary>
    internal static int Finish(string scenario)
    {
        Info($"SUMMARY {scenario} passed={s_passes} failed={s_failures}");
        Info("DONE");
        return 0;
    }
}
