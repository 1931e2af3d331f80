using System.Collections.Concurrent;

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
