using System.Buffers;
using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using jemalloc.Internal;

namespace jemalloc.IO;

/// <summary>
/// One rent of a <see cref="JemMemoryPool"/> block: its owner and its <see cref="MemoryManager{T}"/>.
/// A new one per rent, so that a <see cref="Memory{T}"/> kept past <see cref="IDisposable.Dispose"/>
/// names this rent, which stays disposed, and never the block's next renter.
/// </summary>
/// <remarks>
/// <para>
/// <see cref="GetSpan"/> checks on every call: the block's state must still name this rent, not
/// disposed, and the block's ledger allocation must be live. In an arena the rent itself acquires the
/// block in the ledger until the owner is disposed, and so does each pin: a reset of the arena is
/// refused while the block is rented or pinned, since a span taken from the owner cannot be checked
/// and would reach memory the arena reuses.
/// </para>
/// <para>
/// The rent's state lives in the block (<see cref="PooledBlockAllocation.State"/>), changed by
/// compare-and-swap. Exactly one change takes it to "disposed, nothing pinned or releasing", and that
/// one gives the block back to the pool: a dispose, or the last unpin of a disposed owner. The owner
/// has no finalizer (one per rent would cost more than the rest of a rent): a rent dropped without
/// <see cref="IDisposable.Dispose"/>, or disposed with a pin that was never ended, is found by the
/// pool's sweep after a garbage collection, which gives back its books and sets its block aside.
/// </para>
/// </remarks>
internal sealed unsafe class PooledBlock : MemoryManager<byte>, IDisposable, IPinOwner
{
    internal const string OwnerName = "JemMemoryPool block";

    private readonly PooledBlockAllocation _block;
    private readonly uint _rent;

    internal PooledBlock(PooledBlockAllocation block, uint rent)
    {
        _block = block;
        _rent = rent;
    }

    /// <summary>The block this rent holds (or held).</summary>
    internal PooledBlockAllocation Block => _block;

    /// <summary>The block's memory.</summary>
    /// <exception cref="ObjectDisposedException">The owner was disposed, or an arena reset freed the block.</exception>
    public override Memory<byte> Memory
    {
        get
        {
            ThrowIfUnusable();
            return CreateMemory(_block.Length);
        }
    }

    /// <summary>The block's span, checked now: valid until the owner is disposed.</summary>
    /// <exception cref="ObjectDisposedException">The owner was disposed, or an arena reset freed the block.</exception>
    public override Span<byte> GetSpan()
    {
        ThrowIfUnusable();
        return new Span<byte>((void*)_block.Pointer, _block.Length);
    }

    /// <summary>Pins the block (it is native: it never moves) until the returned handle is disposed; the memory stays allocated until then.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="elementIndex"/> is negative or past the block.</exception>
    /// <exception cref="ObjectDisposedException">The owner was disposed, or an arena reset freed the block.</exception>
    /// <exception cref="InvalidOperationException">The block is pinned the most times it can count.</exception>
    public override MemoryHandle Pin(int elementIndex = 0)
    {
        if ((uint)elementIndex > (uint)_block.Length)
        {
            ThrowHelper.ThrowArgumentOutOfRange(nameof(elementIndex), elementIndex, $"The pin must be inside the {_block.Length:N0}-byte block.");
        }

        while (true)
        {
            long state = Volatile.Read(ref _block.State);
            if (!IsMine(state) || (state & PooledBlockAllocation.Disposed) != 0)
            {
                ThrowHelper.ThrowDisposed(OwnerName);
            }

            // In an arena the rent holds one of the ledger's acquisitions of the block, the pins the rest.
            int maxPins = _block.AcquiredByRent ? PooledBlockAllocation.MaxPins - 1 : PooledBlockAllocation.MaxPins;
            if ((state & PooledBlockAllocation.PinMask) + ((state & PooledBlockAllocation.ReleasingMask) >> 15) >= maxPins)
            {
                ThrowHelper.ThrowInvalidOperation($"This {OwnerName} is already pinned {maxPins} times, the most it counts.");
            }

            if (Interlocked.CompareExchange(ref _block.State, state + 1, state) == state)
            {
                break;
            }
        }

        try
        {
            _block.LedgerBlock.Acquire(OwnerName);
        }
        catch
        {
            LetGo(-1);
            throw;
        }

        return new MemoryHandle((byte*)_block.Pointer + elementIndex, default, new PinToken(this));
    }

    /// <summary>Refuses: a pin ends when the <see cref="MemoryHandle"/> that <see cref="Pin"/> returned is disposed.</summary>
    /// <exception cref="InvalidOperationException">Always: this method cannot tell whose pin it would end.</exception>
    public override void Unpin() => ThrowHelper.ThrowInvalidOperation(
        $"A pin of a {OwnerName} ends when the MemoryHandle that Pin returned is disposed; MemoryManager<byte>.Unpin() cannot tell whose pin it would end, so it ends none.");

    /// <summary>
    /// Ends one pin (its token calls this once); the last one gives the block of a disposed owner back
    /// to the pool. Does nothing once the rent was abandoned (its pins ended then).
    /// </summary>
    /// <exception cref="ObjectDisposedException">The block's arena was destroyed under the pin; the pin stands.</exception>
    void IPinOwner.EndPin()
    {
        while (true)
        {
            long state = Volatile.Read(ref _block.State);
            if (!IsMine(state) || (state & PooledBlockAllocation.Abandoned) != 0)
            {
                // The pin ended when the rent was found abandoned (this is a resurrected handle's unpin).
                return;
            }

            // The pin becomes a release in flight: a dispose meanwhile leaves the block to this unpin.
            if (Interlocked.CompareExchange(ref _block.State, state - 1 + PooledBlockAllocation.OneReleasing, state) == state)
            {
                break;
            }
        }

        try
        {
            _block.LedgerBlock.Release(OwnerName);
        }
        catch
        {
            // The block is gone with its destroyed arena: the pin stands, as the ledger's acquisition does.
            LetGo(1 - PooledBlockAllocation.OneReleasing);
            throw;
        }

        LetGo(-PooledBlockAllocation.OneReleasing);
        // Reachable until the unpin is done, so the pool's sweep cannot take the rent for dropped meanwhile.
        GC.KeepAlive(this);
    }

    /// <summary>Returns the block to its pool, now, or at the last unpin if pinned. Again: does nothing.</summary>
    void IDisposable.Dispose() => Dispose(disposing: true);

    /// <summary>
    /// Settles a rent whose owner the pool's sweep found dropped (its state before is
    /// <paramref name="state"/>; the sweep has given back its books): ends its rent unless it was disposed, ends its pins (nobody
    /// can end them any more, and their acquisitions would refuse the arena's reset for good), and sets
    /// its block aside, neither freed nor reused, because a <see cref="Span{T}"/> of it may still be in
    /// use on some stack, and a span keeps nothing alive.
    /// </summary>
    internal static void SettleAbandoned(PooledBlockAllocation block, long state)
    {
        if ((state & PooledBlockAllocation.Disposed) == 0)
        {
            // The sweep that claimed it counted the return already (JemMemoryPool.SweepDroppedOwners).
            EndRent(block);
        }

        for (long pins = state & PooledBlockAllocation.PinMask; pins > 0; pins--)
        {
            try
            {
                block.LedgerBlock.Release(OwnerName);
            }
            catch (InvalidOperationException)
            {
                // Its arena was destroyed (ObjectDisposedException): nothing left to release.
                break;
            }
        }

        block.Pool.SetAside(block);
    }

    /// <summary>Returns the block to its pool, now, or at the last unpin if pinned. Again: does nothing.</summary>
    protected override void Dispose(bool disposing)
    {
        long state;
        do
        {
            state = Volatile.Read(ref _block.State);
            if (!IsMine(state) || (state & PooledBlockAllocation.Disposed) != 0)
            {
                return;
            }
        }
        while (Interlocked.CompareExchange(ref _block.State, state | PooledBlockAllocation.Disposed, state) != state);

        EndRent(_block);
        if ((state & 0xFFFF_FFFF) == 0)
        {
            _block.Pool.ReturnBlock(_block, ownerGoneNow: true);
        }
        else
        {
            _block.Pool.OnOwnerGone(_block.Length);
        }

        // Reachable until the dispose is done, so the pool's sweep cannot take the rent for dropped meanwhile.
        GC.KeepAlive(this);
    }

    // Ends the rent's acquisition of a block in an arena (taken by the rent, ended by exactly one
    // dispose or abandonment): from now on a reset of the arena may free the block, unless pinned.
    private static void EndRent(PooledBlockAllocation block)
    {
        if (!block.AcquiredByRent)
        {
            return;
        }

        try
        {
            block.LedgerBlock.Release(OwnerName);
        }
        catch (InvalidOperationException)
        {
            // Its arena was destroyed with the acquisition standing (ObjectDisposedException): nothing left
            // to release, and neither a dispose nor the sweep may throw for it.
        }
    }

    private bool IsMine(long state) => PooledBlockAllocation.RentOf(state) == _rent;

    private void LetGo(long change)
    {
        long rest = Interlocked.Add(ref _block.State, change);
        if (rest == ((long)((ulong)_rent << 32) | PooledBlockAllocation.Disposed))
        {
            _block.Pool.ReturnBlock(_block, ownerGoneNow: false);
        }
    }

    private void ThrowIfUnusable()
    {
        long state = Volatile.Read(ref _block.State);
        if (!IsMine(state) || (state & PooledBlockAllocation.Disposed) != 0 || !_block.LedgerBlock.IsLive)
        {
            ThrowUnusable();
        }
    }

    // The owner was disposed (or the block rented again since), or, still rented, its memory was freed
    // under it (its arena was destroyed). The state is read again: a dispose may have come meanwhile.
    [DoesNotReturn, MethodImpl(MethodImplOptions.NoInlining)]
    private void ThrowUnusable()
    {
        long state = Volatile.Read(ref _block.State);
        if (!IsMine(state) || (state & PooledBlockAllocation.Disposed) != 0)
        {
            ThrowHelper.ThrowDisposed(OwnerName);
        }

        ThrowHelper.ThrowFreed(OwnerName);
    }
}
