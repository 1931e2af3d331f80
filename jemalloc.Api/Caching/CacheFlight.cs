namespace jemalloc.Caching;

/// <summary>
/// A miss of <see cref="NativeCache.GetOrAdd{TState}"/> being filled: the first caller runs the factory,
/// later callers for the same key wait for <see cref="Done"/>. Its result is whether the value was
/// stored (false: the first caller was canceled, and a waiter should try again); a factory's
/// exception completes it faulted.
/// </summary>
internal sealed class CacheFlight
{
    internal CacheFlight(byte[] key, ulong hash)
    {
        Key = key;
        Hash = hash;
    }

    /// <summary>The key's bytes.</summary>
    internal byte[] Key { get; }

    /// <summary>The key's hash.</summary>
    internal ulong Hash { get; }

    /// <summary>Completed when the first caller is done.</summary>
    internal TaskCompletionSource<bool> Done { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);
}
