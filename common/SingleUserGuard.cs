namespace jemalloc.AddOns;

/// <summary>
/// The rule of an add-on object that one thread uses at a time (a Parquet reader or writer): a call
/// enters, and another thread that calls in or disposes before it leaves gets
/// <see cref="InvalidOperationException"/> instead of racing it into native code. Disposing is a state
/// of the same word, so no call can begin on a disposed object or a dispose end one under way. A
/// mutable struct: keep it in a non-readonly field and call it through that field. Shared by the
/// add-ons as source.
/// </summary>
internal struct SingleUserGuard
{
    private const int Idle = 0;
    private const int InUse = 1;
    private const int Disposed = 2;

    private int _state;

    /// <summary>Whether the object was disposed.</summary>
    internal readonly bool IsDisposed => Volatile.Read(in _state) == Disposed;

    /// <summary>Enters a call; leave with <see cref="Exit"/> in a <see langword="finally"/>.</summary>
    /// <exception cref="ObjectDisposedException">The object was disposed.</exception>
    /// <exception cref="InvalidOperationException">Another thread is inside a call.</exception>
    internal void Enter(string typeName)
    {
        int state = Interlocked.CompareExchange(ref _state, InUse, Idle);
        if (state != Idle)
        {
            ThrowBusy(state, typeName, "call it");
        }
    }

    /// <summary>Leaves the call entered by <see cref="Enter"/>.</summary>
    internal void Exit() => Volatile.Write(ref _state, Idle);

    /// <summary>Marks the object disposed: <see langword="true"/> the first time, when the caller frees what it owns.</summary>
    /// <exception cref="InvalidOperationException">Another thread is inside a call: the object is left as it was.</exception>
    internal bool TryDispose(string typeName)
    {
        int state = Interlocked.CompareExchange(ref _state, Disposed, Idle);
        if (state == InUse)
        {
            ThrowBusy(state, typeName, "dispose it");
        }

        return state == Idle;
    }

    /// <summary>Throws <see cref="ObjectDisposedException"/> if the object was disposed.</summary>
    /// <exception cref="ObjectDisposedException">It was.</exception>
    internal readonly void ThrowIfDisposed(string typeName)
    {
        if (IsDisposed)
        {
            throw new ObjectDisposedException(typeName);
        }
    }

    private static void ThrowBusy(int state, string typeName, string what)
    {
        if (state == Disposed)
        {
            throw new ObjectDisposedException(typeName);
        }

        throw new InvalidOperationException($"Another thread is using this {typeName}: {what} once that call has returned (it is used by one thread at a time).");
    }
}
