namespace jemalloc.Caching;

/// <summary>
/// A miss of <see cref="NativeCache.GetOrAdd{TState}"/> being filled: the first caller runs the factory,
/// later callers for the same key wait for <see cref="Done"/>. Its result is whether the factory's
/// value was stored (false: the first caller was canceled, or found the key stored by another, and a
/// waiter reads or tries again); a factory's exception completes it faulted.
/// </summary>
internal sealed class CacheFlight
{
    internal CacheFlight(ulong hash, byte[] key, int ownerThread, CacheFlight? outer)
    {
        Hash = hash;
        Key = key;
        OwnerThread = ownerThread;
        Outer = outer;
    }

    /// <summary>The key's hash.</summary>
    internal ulong Hash { get; }

    /// <summary>The key's bytes: flights of different keys with one hash are told apart by them.</summary>
    internal byte[] Key { get; }

    /// <summary>The next flight of another key with the same hash (under the flight table's lock).</summary>
    internal CacheFlight? Next { get; set; }

    /// <summary>Callers that joined after the first (under the flight table's lock).</summary>
    internal int Waiters { get; set; }

    /// <summary>
    /// A copy of the value the factory produced, set before <see cref="Done"/> completes with true when
    /// anyone waited: a waiter whose value was evicted before it could read it gets these bytes, not a second factory call.
    /// </summary>
    internal byte[]? Value { get; set; }

    /// <summary>The managed thread running a synchronous factory; 0 for an asynchronous one.</summary>
    internal int OwnerThread { get; }

    /// <summary>The asynchronous flight whose factory started this one's, if any (to find re-entry up the chain).</summary>
    internal CacheFlight? Outer { get; }

    /// <summary>Completed when the first caller is done.</summary>
    internal TaskCompletionSource<bool> Done { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

    /// <summary>Whether the caller runs this flight's factory: on <paramref name="thread"/> (synchronous) or up its async flow (<paramref name="owned"/>, innermost first).</summary>
    internal bool IsOwnedBy(int thread, CacheFlight? owned)
    {
        if (OwnerThread == thread)
        {
            return true;
        }

        for (; owned != null; owned = owned.Outer)
        {
            if (owned == this)
            {
                return true;
            }
        }

        return false;
    }
}
