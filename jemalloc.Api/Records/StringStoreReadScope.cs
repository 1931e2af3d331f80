namespace jemalloc;

/// <summary>
/// An open read scope of a <see cref="Utf8StringStore"/> (<see cref="Utf8StringStore.EnterRead"/>):
/// while it is open the store cannot be reset or disposed. Dispose it exactly once, on any thread.
/// </summary>
public readonly struct StringStoreReadScope : IDisposable
{
    private readonly Utf8StringStore? _store;

    internal StringStoreReadScope(Utf8StringStore store) => _store = store;

    /// <summary>Closes the scope. Disposing <see langword="default"/> does nothing.</summary>
    /// <exception cref="InvalidOperationException">The store has no open scope left: this scope or a copy of it was already disposed.</exception>
    public void Dispose() => _store?.ExitRead();
}
