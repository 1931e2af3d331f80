using jemalloc.Ledger;

namespace jemalloc;

/// <summary>
/// A hold on a structure's memory that can be kept in a field, past any scope: until it ends, the
/// structure cannot be disposed or freed and its arena cannot be reset (they throw
/// <see cref="InvalidOperationException"/>), as while a <see cref="MemoryLease{T}"/> is open. Take one
/// with <see cref="NativeBuffer{T}.Hold"/>; end it with <see cref="Dispose"/>.
/// </summary>
/// <remarks>
/// <para>
/// It is for memory handed to code that keeps it beyond a lexical scope: a view over the memory that
/// other objects read later, a native consumer that reads it after the call that handed it over.
/// </para>
/// <para>
/// A hold is counted with the leases, apart from <see cref="NativeBuffer{T}.Acquire"/>: no
/// <see cref="NativeBuffer{T}.Release"/> can end it, and <see cref="Dispose"/> ends this hold only,
/// once, however often it is called. A hold dropped without <see cref="Dispose"/> is ended by its
/// finalizer once the hold is unreachable, as a structure dropped without <c>Dispose</c> is freed by
/// its own: keep the hold reachable for as long as anything (native code included) may read the memory.
/// </para>
/// </remarks>
public sealed class MemoryHold : IDisposable
{
    // The structure: reachable while the hold is, so its own finalizer cannot run first.
    private readonly object _owner;
    private readonly LedgerBlock _block;
    // 1 while held; 0 before the lease is taken and once ended.
    private int _held;

    private MemoryHold(object owner, LedgerBlock block)
    {
        _owner = owner;
        _block = block;
    }

    /// <summary>Whether the hold is still in force (not disposed or finalized).</summary>
    public bool IsHeld => Volatile.Read(ref _held) != 0;

    /// <summary>Ends the hold; later calls do nothing.</summary>
    public void Dispose()
    {
        End();
        GC.SuppressFinalize(this);
    }

    /// <summary>
    /// Takes a hold on a live allocation. The object is made before the ledger counts the hold, so
    /// nothing can fail between counting it and handing out the one object that ends it (if the count
    /// is refused, the object holds nothing and its finalizer does nothing).
    /// </summary>
    /// <exception cref="ObjectDisposedException">The allocation was freed.</exception>
    /// <exception cref="InvalidOperationException">It has the most leases and holds the ledger counts.</exception>
    internal static MemoryHold Take(object owner, LedgerBlock block, string ownerName)
    {
        var hold = new MemoryHold(owner, block);
        block.BeginLease(ownerName);
        Volatile.Write(ref hold._held, 1);
        return hold;
    }

    /// <summary>Ends a hold dropped without <see cref="Dispose"/>.</summary>
    ~MemoryHold() => End();

    private void End()
    {
        if (Interlocked.Exchange(ref _held, 0) != 0)
        {
            _block.EndLease();
            GC.KeepAlive(_owner);
        }
    }
}
