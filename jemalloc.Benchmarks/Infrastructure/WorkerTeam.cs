namespace jemalloc.Benchmarks.Infrastructure;

/// <summary>
/// A fixed number of worker threads, started once and parked, that <see cref="Run"/> releases
/// together to do one fixed amount of work and waits for, with a timeout. The multi-thread
/// <c>alloc</c> suite measures its operations with it, so no thread starts before the others and
/// no thread creation is measured.
/// </summary>
/// <remarks>
/// Two barriers of the workers plus the caller: the first releases the workers together, the
/// second is where the caller learns that every worker finished. An exception thrown by a worker
/// is kept and thrown by <see cref="Run"/> once every worker is back; a worker that does not come
/// back within the timeout makes <see cref="Run"/> throw a <see cref="TimeoutException"/> naming it,
/// after which the team refuses to run again (its threads may still be busy).
/// </remarks>
public sealed class WorkerTeam : IDisposable
{
    private readonly Thread[] _threads;
    private readonly Barrier _start;
    private readonly Barrier _end;
    private readonly Exception?[] _errors;
    private readonly bool[] _finished;
    private Action<int>? _work;
    private volatile bool _stopping;
    private bool _broken;
    private bool _disposed;

    /// <summary>Starts <paramref name="threads"/> background threads, parked until the first <see cref="Run"/>.</summary>
    /// <param name="threads">The number of worker threads.</param>
    /// <param name="name">The threads' name prefix (shown by debuggers and profilers).</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="threads"/> is less than 1 or more than <see cref="MaxThreads"/>.</exception>
    /// <exception cref="ArgumentNullException"><paramref name="name"/> is null.</exception>
    public WorkerTeam(int threads, string name)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(threads, 1);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(threads, MaxThreads);
        ArgumentNullException.ThrowIfNull(name);
        _start = new Barrier(threads + 1);
        _end = new Barrier(threads + 1);
        _errors = new Exception?[threads];
        _finished = new bool[threads];
        _threads = new Thread[threads];
        for (int i = 0; i < threads; i++)
        {
            int index = i;
            _threads[i] = new Thread(() => Loop(index)) { IsBackground = true, Name = $"{name} {i}" };
            _threads[i].Start();
        }
    }

    /// <summary>The most threads a team may have.</summary>
    public const int MaxThreads = 64;

    /// <summary>The number of worker threads.</summary>
    public int Count => _threads.Length;

    /// <summary>
    /// Releases every worker together to run <paramref name="work"/> with its index (0 to
    /// <see cref="Count"/> - 1) and returns when all of them have finished.
    /// </summary>
    /// <exception cref="ArgumentNullException"><paramref name="work"/> is null.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="timeout"/> is not positive.</exception>
    /// <exception cref="ObjectDisposedException">The team is disposed.</exception>
    /// <exception cref="InvalidOperationException">An earlier run timed out: its threads may still be running.</exception>
    /// <exception cref="TimeoutException">A worker was not back within <paramref name="timeout"/> (the message names it).</exception>
    /// <exception cref="AggregateException">One or more workers threw; each one's exception is inside.</exception>
    public void Run(Action<int> work, TimeSpan timeout)
    {
        ArgumentNullException.ThrowIfNull(work);
        ArgumentOutOfRangeException.ThrowIfLessThanOrEqual(timeout, TimeSpan.Zero);
        ObjectDisposedException.ThrowIf(_disposed, this);
        if (_broken)
        {
            throw new InvalidOperationException("An earlier run of this worker team timed out; its threads may still be running, so it cannot run again.");
        }

        _work = work;
        Array.Clear(_errors);
        Array.Clear(_finished);
        // The barriers are full fences: the workers see the work and the cleared arrays, and the caller sees what they wrote.
        if (!_start.SignalAndWait(timeout))
        {
            _broken = true;
            throw new TimeoutException($"The worker threads were not all ready to start within {timeout}.");
        }

        if (!_end.SignalAndWait(timeout))
        {
            _broken = true;
            int[] late = [.. Enumerable.Range(0, Count).Where(i => !Volatile.Read(ref _finished[i]))];
            throw new TimeoutException($"{late.Length} of {Count} worker threads (thread {string.Join(", ", late)}) did not finish their work within {timeout}.");
        }

        Exception[] errors = [.. _errors.OfType<Exception>()];
        if (errors.Length > 0)
        {
            throw new AggregateException($"{errors.Length} of {Count} worker threads failed.", errors);
        }
    }

    /// <summary>Stops the threads (waiting for them unless a run timed out); later runs throw <see cref="ObjectDisposedException"/>.</summary>
    public void Dispose()
    {
        if (_disposed)
        {
            return;
        }

        _disposed = true;
        if (!_broken)
        {
            _stopping = true;
            _start.SignalAndWait();
            foreach (Thread thread in _threads)
            {
                thread.Join();
            }

            _start.Dispose();
            _end.Dispose();
        }
    }

    private void Loop(int index)
    {
        while (true)
        {
            _start.SignalAndWait();
            if (_stopping)
            {
                return;
            }

            try
            {
                _work!(index);
            }
#pragma warning disable CA1031 // Any exception of the work is handed to the caller of Run.
            catch (Exception e)
#pragma warning restore CA1031
            {
                _errors[index] = e;
            }

            Volatile.Write(ref _finished[index], true);
            _end.SignalAndWait();
        }
    }
}
