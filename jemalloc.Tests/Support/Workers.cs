using System.Collections.Concurrent;
using System.Runtime.ExceptionServices;

namespace jemalloc.Tests.Support;

/// <summary>
/// Runs test code on worker threads so that a failure there fails the test instead of killing the
/// test host: every exception a worker throws is collected and rethrown on the test thread as an
/// <see cref="AggregateException"/>, and a worker that does not finish in time fails the test
/// (it is a background thread, so a hung one cannot keep the host alive either).
/// </summary>
internal static class Workers
{
    /// <summary>How long <see cref="Run"/> and <see cref="Running.Join"/> wait by default.</summary>
    internal static readonly TimeSpan DefaultTimeout = TimeSpan.FromSeconds(120);

    /// <summary>Runs <paramref name="body"/> on <paramref name="count"/> new threads (each gets its index) and waits for all.</summary>
    /// <exception cref="AggregateException">Some worker threw (it holds every exception thrown), or had
    /// not finished after <paramref name="timeout"/> (it holds a <see cref="TimeoutException"/>).</exception>
    internal static void Run(int count, Action<int> body, TimeSpan? timeout = null) => Start(count, body).Join(timeout);

    /// <summary>Runs <paramref name="body"/> on one new thread and waits for it.</summary>
    internal static void RunOne(Action body, TimeSpan? timeout = null) => Run(1, _ => body(), timeout);

    /// <summary>
    /// Runs <paramref name="body"/> on <paramref name="count"/> new threads (readers, say) while
    /// <paramref name="onTestThread"/> runs on the test thread (the writer), then cancels the token the
    /// workers get and waits for them. Whatever fails fails the test: an exception on the test thread
    /// stops the workers first (no worker is left spinning), and the workers' exceptions and a worker
    /// that does not stop within <paramref name="timeout"/> are rethrown with it.
    /// </summary>
    /// <exception cref="AggregateException">A worker threw or did not stop in time (with the test thread's exception, if any).</exception>
    internal static void RunAlongside(int count, Action<int, CancellationToken> body, Action onTestThread, TimeSpan? timeout = null)
    {
        ArgumentNullException.ThrowIfNull(body);
        ArgumentNullException.ThrowIfNull(onTestThread);
        using var stop = new CancellationTokenSource();
        Running running = Start(count, worker => body(worker, stop.Token));
        Exception? failure = null;
        try
        {
            onTestThread();
        }
        catch (Exception e)
        {
            failure = e;
        }

        stop.Cancel();
        try
        {
            running.Join(timeout);
        }
        catch (AggregateException workers) when (failure is not null)
        {
            throw new AggregateException("The test thread and worker threads failed.", [failure, .. workers.InnerExceptions]);
        }

        if (failure is not null)
        {
            ExceptionDispatchInfo.Throw(failure);
        }
    }

    /// <summary>Runs <paramref name="action"/> on a new thread and returns what it threw (null if nothing); fails if it does not finish in time.</summary>
    /// <exception cref="TimeoutException">The thread had not finished after <paramref name="timeout"/>.</exception>
    internal static Exception? CatchOnOtherThread(Action action, TimeSpan? timeout = null)
    {
        ArgumentNullException.ThrowIfNull(action);
        Exception? caught = null;
        var thread = new Thread(() =>
        {
            try
            {
                action();
            }
            catch (Exception e)
            {
                caught = e;
            }
        })
        {
            IsBackground = true,
            Name = "test worker",
        };
        thread.Start();
        if (!thread.Join(timeout ?? DefaultTimeout))
        {
            throw new TimeoutException($"The other thread did not finish within {(timeout ?? DefaultTimeout).TotalSeconds:N0} s (hung or deadlocked).");
        }

        return caught;
    }

    /// <summary>Waits for <paramref name="task"/>, failing instead of hanging when it has not finished in time; rethrows what it threw.</summary>
    /// <exception cref="TimeoutException">The task had not finished after <paramref name="timeout"/>.</exception>
    internal static Task WithTimeout(Task task, TimeSpan? timeout = null)
    {
        ArgumentNullException.ThrowIfNull(task);
        return task.WaitAsync(timeout ?? DefaultTimeout);
    }

    /// <summary>Starts the workers and returns at once; <see cref="Running.Join"/> waits and rethrows.</summary>
    internal static Running Start(int count, Action<int> body)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(count);
        var running = new Running(count, body);
        running.StartAll();
        return running;
    }

    /// <summary>Workers started by <see cref="Start"/>.</summary>
    internal sealed class Running
    {
        private readonly Thread[] _threads;
        private readonly ConcurrentQueue<(int Worker, Exception Exception)> _failures = new();

        internal Running(int count, Action<int> body)
        {
            _threads = new Thread[count];
            for (int i = 0; i < count; i++)
            {
                int worker = i;
                _threads[i] = new Thread(() =>
                {
                    try
                    {
                        body(worker);
                    }
                    catch (Exception e)
                    {
                        _failures.Enqueue((worker, e));
                    }
                })
                {
                    IsBackground = true,
                    Name = $"test worker {worker}",
                };
            }
        }

        /// <summary>Whether some worker has thrown already (the others may still run).</summary>
        internal bool HasFailed => !_failures.IsEmpty;

        /// <summary>Rethrows what the workers threw so far, without waiting for them.</summary>
        internal void ThrowIfFailed()
        {
            if (!_failures.IsEmpty)
            {
                throw new AggregateException("Worker threads failed.", _failures.Select(f => f.Exception));
            }
        }

        internal void StartAll()
        {
            foreach (Thread thread in _threads)
            {
                thread.Start();
            }
        }

        /// <summary>Waits for every worker; rethrows what they threw.</summary>
        /// <exception cref="AggregateException">Some worker threw or had not finished in time (a <see cref="TimeoutException"/> inside).</exception>
        internal void Join(TimeSpan? timeout = null)
        {
            DateTime deadline = DateTime.UtcNow + (timeout ?? DefaultTimeout);
            var hung = new List<string>();
            foreach (Thread thread in _threads)
            {
                TimeSpan left = deadline - DateTime.UtcNow;
                if (!thread.Join(left > TimeSpan.Zero ? left : TimeSpan.Zero))
                {
                    hung.Add(thread.Name!);
                }
            }

            var exceptions = _failures
                .OrderBy(f => f.Worker)
                .Select(f => (Exception)new InvalidOperationException($"Worker {f.Worker} failed: {f.Exception.Message}", f.Exception))
                .ToList();
            if (hung.Count > 0)
            {
                exceptions.Add(new TimeoutException($"{string.Join(", ", hung)} did not finish within {(timeout ?? DefaultTimeout).TotalSeconds:N0} s (hung or deadlocked)."));
            }

            if (exceptions.Count > 0)
            {
                throw new AggregateException("Worker threads failed.", exceptions);
            }
        }
    }
}
