using jemalloc.Ledger;

namespace jemalloc;

/// <summary>
/// An open read scope of a <see cref="Utf8StringStore"/> (<see cref="Utf8StringStore.EnterRead"/>):
/// while it is open the store cannot be reset or disposed. Dispose it exactly once, on any thread.
/// </summary>
public readonly struct StringStoreReadScope : IDisposable
{
    private readonly Utf8StringStore? _store;

    // The scope's own ledger token, spent by the first Dispose of any copy: a second Dispose through
    // a copy must not close a scope another reader still holds.
    private readonly LedgerBlock _token;

    internal StringStoreReadScope(Utf8StringStore store, LedgerBlock token)
    {
        _store = store;
        _token = token;
    }

    /// <summary>Closes the scope. Disposing <see langword="default"/> does nothing.</summary>
    /// <exception cref="InvalidOperationException">This scope or a copy of it was already disposed, or it is a mix of two scopes (a copy made while another thread overwrote the variable).</exception>
    public void Dispose()
    {
        if (_store is null)
        {
            return;
        }

        // The token is tagged with its store: a racy copy pairing one store with another's token
        // must not close a scope of either (the store's count would let a reset free blocks under
        // the reader that opened it).
        if (!_token.SpendToken(_store.ScopeTag))
        {
            Internal.ThrowHelper.ThrowInvalidOperation("This StringStoreReadScope (or a copy of it) was already disposed, or it is a mix of two scopes made by a racy copy.");
        }

        _store.ExitRead();
    }
}
