namespace jemalloc.ArenaBooks;

/// <summary>
/// What a <see cref="JemArena"/>'s reset must know of its raw allocations (<c>JemArena.Allocate</c>),
/// which have no slot in the ledger: in checked mode each live one (address and size), so that the
/// reset can free each through the quarantine; otherwise only that one may be live, and then only
/// the arena's own reset can free everything.
/// </summary>
/// <remarks>
/// <see cref="Add"/> and <see cref="Remove"/> run inside the arena's gate, any number at once;
/// <see cref="TakeTracked"/> and <see cref="Forget"/> with the gate closed.
/// </remarks>
internal sealed class ArenaRawBlocks
{
    // Checked mode's live raw allocations (address -> size); guarded by itself.
    private readonly Dictionary<nint, nuint> _tracked = [];
    private volatile int _trackedCount;

    // Whether a raw allocation made outside checked mode (so not in _tracked) may be live. Cleared
    // by the arena's own reset or destruction.
    private volatile bool _untracked;

    /// <summary>Whether a raw allocation made outside checked mode may be live, which only the arena's own reset can free.</summary>
    internal bool MayHaveUntracked => _untracked;

    /// <summary>
    /// Records a raw allocation of <paramref name="size"/> bytes at <paramref name="memory"/>, inside the
    /// arena's gate, so that a reset sees it: one by one when <paramref name="tracked"/> (checked mode).
    /// </summary>
    internal void Add(nint memory, nuint size, bool tracked)
    {
        if (tracked)
        {
            lock (_tracked)
            {
                _tracked[memory] = size;
                _trackedCount = _tracked.Count;
            }
        }
        else if (!_untracked)
        {
            _untracked = true;
        }
    }

    /// <summary>Forgets a raw allocation being freed, inside the arena's gate.</summary>
    internal void Remove(nint memory)
    {
        if (_trackedCount != 0)
        {
            lock (_tracked)
            {
                _tracked.Remove(memory);
                _trackedCount = _tracked.Count;
            }
        }
    }

    /// <summary>With the gate closed: the tracked raw allocations, which the caller frees; none is tracked afterwards.</summary>
    internal nint[] TakeTracked()
    {
        lock (_tracked)
        {
            nint[] taken = [.. _tracked.Keys];
            _tracked.Clear();
            _trackedCount = 0;
            return taken;
        }
    }

    /// <summary>After the arena's own reset or destruction: no raw allocation of it is live any more.</summary>
    internal void Forget()
    {
        lock (_tracked)
        {
            _tracked.Clear();
            _trackedCount = 0;
        }

        _untracked = false;
    }
}
