namespace jemalloc.Caching;

/// <summary>
/// A miss of <see cref="NativeCache.GetOrAdd{TState}"/> being filled: the first caller runs the factory,
/// later callers for the same key wait for <see cref="Done"/>. Its result is whether the value was
/// stored (false: the first caller was canceled, and a waiter should try again); a factory's
/// exception completes it faulted.
/// </summary>
internal sealed class CacheFlight
{
    internal CacheFlight(ulong hash, int ownerThread, CacheFlight? outer)
    {
        Hash = hash;
        OwnerThread = ownerThread;
        Outer = outer;
    }

    /// <summary>The key's hash.</summary>
    internal ulong Hash { get; }

    /// <summary>The managed thread running a synchronous factory; 0 for an asynchronous one.</summary>
    internal int OwnerThread { get; }

    /// <summary>The asynchronous flight whose factory started this one's, if any (to find re-entry up the chain).</summary>
    internal CacheFlight? Outer { get; }

    /// <summary>Completed when the first caller is done.</summary>
    internal TaskCompletionSource<bool> Done { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);
}
