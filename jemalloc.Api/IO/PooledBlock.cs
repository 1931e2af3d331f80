using System.Buffers;
using jemalloc.Internal;

namespace jemalloc;

/// <summary>
/// One rent of a <see cref="JemMemoryPool"/> block: its owner and its <see cref="MemoryManager{T}"/>.
/// A new one per rent, so that a <see cref="Memory{T}"/> kept past <see cref="IDisposable.Dispose"/>
/// names this rent, which stays disposed, and never the block's next renter.
/// </summary>
/// <remarks>
/// <para>
/// <see cref="GetSpan"/> checks on every call: the rent must not be disposed, and the block's ledger
/// allocation must be live. In an arena the rent itself acquires the block in the ledger until the
/// owner is disposed, and so does each pin: a reset of the arena is refused while the block is rented
/// or pinned, since a span taken from the owner cannot be checked and would reach memory the arena
/// reuses.
/// </para>
/// <para>
/// The state is one word changed by compare-and-swap (no lock, which a caller could hold): whether the
/// owner was disposed, the pins, and the unpins still releasing their ledger acquisition. Exactly one
/// change takes it to "disposed, nothing pinned or releasing", and that one gives the block back to
/// the pool: a dispose, or the last unpin of a disposed owner. A rent dropped without
/// <see cref="IDisposable.Dispose"/>, or disposed with a pin that was never ended, is finalized: it
/// gives back its books and leaves its block to the pool's <see cref="JemMemoryPool.SetAside"/>.
/// </para>
/// </remarks>
internal sealed unsafe class PooledBlock : MemoryManager<byte>, IDisposable, IPinOwner
{
    internal const string OwnerName = "JemMemoryPool block";
    private const int MaxPins = 0x7FFF;
    private const int PinMask = 0x7FFF;
    private const int OneReleasing = 1 << 15;
    private const int ReleasingMask = 0x7FFF << 15;
    private const int Disposed = 1 << 30;

    // Set by the finalizer, with Disposed: a reference another finalizer resurrects can no longer
    // give the set-aside block back (to the cache, where it would belong to two rents) nor end a pin.
    private const int Finalized = 1 << 31;

    // The block's fixed facts live in its allocation, shared by its rents: this object, one per rent,
    // is a reference and a state word (32 bytes).
    private readonly PooledBlockAllocation _block;
    private int _state;

    internal PooledBlock(PooledBlockAllocation block) => _block = block;

    /// <summary>
    /// Unreachable without having given its block back: a dropped owner, or a disposed one with a pin
    /// whose <see cref="MemoryHandle"/> was dropped without being disposed (nobody can end that pin).
    /// The owner's bytes go back to the budget, but the block is neither freed nor reused: a
    /// <see cref="Span{T}"/> of it may still be in use on some stack, and a span keeps nothing alive.
    /// The pool sets it aside until its own <see cref="MemoryPool{T}.Dispose()"/>. Its pins end (so an
    /// arena reset may free the block, as it frees every block of the arena), and the owner stays
    /// disposed even if the finalizer of another object that held it disposes or unpins it afterwards.
    /// </summary>
    [System.Diagnostics.CodeAnalysis.SuppressMessage("Reliability", "CA2015", Justification = "It neither frees nor reuses the memory: the block is set aside until the pool is disposed, so a span still in use stays valid.")]
    ~PooledBlock()
    {
        int state = Interlocked.Exchange(ref _state, Disposed | Finalized);
        if (state == Disposed || (state & Finalized) != 0)
        {
            // Re-registered for finalization after its block went back to the pool, or finalized before.
            return;
        }

        if ((state & Disposed) == 0)
        {
            _block.Pool.OnOwnerGone(_block.Length);
            EndRent();
        }

        // Nobody can end these pins any more: their acquisitions would refuse the arena's reset for good.
        for (int pins = state & PinMask; pins > 0; pins--)
        {
            try
            {
                AllocationLedger.Release(_block.Handle, OwnerName);
            }
            catch (InvalidOperationException)
            {
                // Its arena was destroyed (ObjectDisposedException): nothing left to release, and a finalizer must not throw.
                break;
            }
        }

        _block.Pool.SetAside(_block);
    }

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
            int state = Volatile.Read(ref _state);
            if ((state & Disposed) != 0)
            {
                ThrowHelper.ThrowObjectDisposed(OwnerName);
            }

            // In an arena the rent holds one of the ledger's acquisitions of the block, the pins the rest.
            int maxPins = _block.AcquiredByRent ? MaxPins - 1 : MaxPins;
            if ((state & PinMask) + ((state & ReleasingMask) >> 15) >= maxPins)
            {
                ThrowHelper.ThrowInvalidOperation($"This {OwnerName} is already pinned {maxPins} times, the most it counts.");
            }

            if (Interlocked.CompareExchange(ref _state, state + 1, state) == state)
            {
                break;
            }
        }

        try
        {
            AllocationLedger.Acquire(_block.Handle, OwnerName);
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
    /// to the pool. Does nothing once the owner was finalized (its pins ended then).
    /// </summary>
    /// <exception cref="ObjectDisposedException">The block's arena was destroyed under the pin; the pin stands.</exception>
    void IPinOwner.EndPin()
    {
        while (true)
        {
            int state = Volatile.Read(ref _state);
            if ((state & Finalized) != 0)
            {
                // The pin ended when the owner was finalized (this is a resurrected handle's unpin).
                return;
            }

            // The pin becomes a release in flight: a dispose meanwhile leaves the block to this unpin.
            if (Interlocked.CompareExchange(ref _state, state - 1 + OneReleasing, state) == state)
            {
                break;
            }
        }

        try
        {
            AllocationLedger.Release(_block.Handle, OwnerName);
        }
        catch
        {
            // The block is gone with its destroyed arena: the pin stands, as the ledger's acquisition does.
            LetGo(1 - OneReleasing);
            throw;
        }

        LetGo(-OneReleasing);
    }

    /// <summary>Returns the block to its pool, now, or at the last unpin if pinned. Again: does nothing.</summary>
    [System.Diagnostics.CodeAnalysis.SuppressMessage("Usage", "CA1816", Justification = "GiveBack suppresses finalization once the block is back with the pool; an owner disposed while pinned stays finalizable, since its pin may be dropped.")]
    void IDisposable.Dispose() => Dispose(disposing: true);

    /// <summary>Returns the block to its pool, now, or at the last unpin if pinned. Again: does nothing.</summary>
    protected override void Dispose(bool disposing)
    {
        int state;
        do
        {
            state = Volatile.Read(ref _state);
            if ((state & Disposed) != 0)
            {
                return;
            }
        }
        while (Interlocked.CompareExchange(ref _state, state | Disposed, state) != state);

        EndRent();
        if (state == 0)
        {
            GiveBack(ownerGoneNow: true);
        }
        else
        {
            _block.Pool.OnOwnerGone(_block.Length);
        }
    }

    // Ends the rent's acquisition of a block in an arena (taken by the rent, ended by exactly one
    // dispose or finalization): from now on a reset of the arena may free the block, unless pinned.
    private void EndRent()
    {
        if (!_block.AcquiredByRent)
        {
            return;
        }

        try
        {
            AllocationLedger.Release(_block.Handle, OwnerName);
        }
        catch (InvalidOperationException)
        {
            // Its arena was destroyed with the acquisition standing (ObjectDisposedException): nothing left
            // to release, and neither a dispose nor a finalizer may throw for it.
        }
    }

    private void LetGo(int change)
    {
        if (Interlocked.Add(ref _state, change) == Disposed)
        {
            GiveBack(ownerGoneNow: false);
        }
    }

    [System.Diagnostics.CodeAnalysis.SuppressMessage("Usage", "CA1816", Justification = "Called exactly when the block goes back to the pool, by a dispose or the last unpin; from then on the finalizer has nothing to do.")]
    private void GiveBack(bool ownerGoneNow)
    {
        // Given back exactly once; the finalizer would give it again.
        GC.SuppressFinalize(this);
        _block.Pool.ReturnBlock(_block, ownerGoneNow);
    }

    private void ThrowIfUnusable()
    {
        if ((Volatile.Read(ref _state) & Disposed) != 0 || !_block.Handle.IsValid)
        {
            ThrowHelper.ThrowObjectDisposed(OwnerName);
        }
    }
}
