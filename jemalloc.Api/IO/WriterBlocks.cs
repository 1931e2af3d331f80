using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using jemalloc.Internal;
using jemalloc.Ledger;
using jemalloc.Memory;

namespace jemalloc.IO;

/// <summary>
/// The blocks of one <see cref="NativeBufferWriter{T}"/> and every change to them: the current block
/// (allocated at the first write, grown with <c>rallocx</c> in place or moved, handed over, freed), the
/// blocks growths kept because a span of them may still be read, the writer's holds of them in an
/// arena, the version each change bumps, and the writer's end (its dispose or finalizer). A mutable
/// struct: keep it in a non-readonly field and call it through that field.
/// </summary>
/// <remarks>
/// The holds and the version live with the blocks, not with what was handed out: a move hands the old
/// block's hold to the kept list under the gate a hold takes, so a read on another thread and a growth
/// agree on which block is held; and a dispose bumps the version before it clears the pointer, so a
/// read that finds the cleared pointer also finds a new version.
/// </remarks>
internal unsafe struct WriterBlocks<T>
    where T : unmanaged
{
    private const int MinimumCapacity = 256;
    private const string TypeName = "NativeBufferWriter";

    // Orders a dispose (on any thread: a NativeMemoryStream lets its owner dispose the writer) against a
    // first allocation, a move and a hold, so that none of them records a block the dispose missed.
    private readonly Lock _gate;
    // Null outside an arena unless the writer was given options: each allocation then follows HugePagePolicy.
    private readonly AllocationOptions? _options;

    // In an arena, the block a span, memory or read went out of is acquired (held) by the writer
    // until a hand-over or Dispose, so that a reset of the arena is refused instead of freeing it
    // under that span; the kept blocks stay held with it. Outside an arena only the writer frees
    // its blocks, so nothing is held.
    private readonly bool _holdsHandedOutBlocks;
    private LedgerBlock _current;
    private T* _pointer;
    private long _capacity;

    // A long, so no number of growths or hand-overs can wrap it back to a stale memory's version.
    private long _version;

    // Whether the writer was disposed or finalized: every use is refused from then on.
    private bool _closed;

    // Whether a span, memory or sequence of the block went out since it was last moved: a growth then
    // keeps the old block (_retired) instead of freeing it, since that span may still be read.
    private bool _handedOut;

    // The block the writer acquired for the spans it handed out (see _holdsHandedOutBlocks).
    private LedgerBlock _held;

    // Blocks left by growths, kept allocated (stale, never written again) until a hand-over or
    // Dispose; with the doubling growth they hold fewer bytes than the block itself. Held: whether
    // the writer acquired it for the spans it handed out.
    private List<(LedgerBlock Block, bool Held)>? _retired;

    /// <summary>No block yet; growths allocate with <paramref name="options"/> (<see langword="null"/>: as <see cref="HugePagePolicy"/> chooses for the size).</summary>
    /// <param name="options">The arena's options, the options the writer was created with, or <see langword="null"/>.</param>
    /// <param name="holdsHandedOutBlocks">Whether the blocks are in an arena, and held once something of them went out.</param>
    internal WriterBlocks(AllocationOptions? options, bool holdsHandedOutBlocks)
    {
        _gate = new Lock();
        _options = options;
        _holdsHandedOutBlocks = holdsHandedOutBlocks;
    }

    /// <summary>The current block (<see langword="default"/> while none is allocated).</summary>
    internal readonly LedgerBlock Current => _current;

    /// <summary>The current block's address; null while none is allocated, and after a hand-over or dispose.</summary>
    internal readonly T* Pointer
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get => _pointer;
    }

    /// <summary>The elements the current block holds; read by the one writer.</summary>
    internal readonly long Capacity
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get => _capacity;
    }

    /// <summary>The version of the blocks (bumped by every growth, hand-over and dispose); read by the one writer.</summary>
    internal readonly long Version => _version;

    /// <summary>Whether the writer was disposed or finalized (not an arena reset: see <see cref="IsClosedOrFreed"/>).</summary>
    internal readonly bool IsClosed => _closed;

    /// <summary>Whether the writer was disposed, or its block freed by a reset of its arena (one load and compare while it is live).</summary>
    internal readonly bool IsClosedOrFreed
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get => _closed || (!_current.IsDefault && !_current.IsLive && CurrentFreed());
    }

    /// <summary>Whether the writer holds its current block for the spans it handed out.</summary>
    private readonly bool HoldsCurrent => !_held.IsDefault && _held == _current;

    /// <summary>The capacity, read by any thread.</summary>
    internal readonly long ReadCapacity() => Volatile.Read(in _capacity);

    /// <summary>The version, read by any thread.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal readonly long ReadVersion() => Volatile.Read(in _version);

    /// <summary>Throws <see cref="ObjectDisposedException"/> if the writer was disposed or its arena reset.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal readonly void ThrowIfClosedOrFreed()
    {
        if (IsClosedOrFreed)
        {
            ThrowClosedOrFreed(_closed);
        }
    }

    // Disposed, or (not closed, yet unusable) a reset or dispose of the writer's arena freed its block.
    [DoesNotReturn, MethodImpl(MethodImplOptions.NoInlining)]
    private static void ThrowClosedOrFreed(bool closed)
    {
        if (closed)
        {
            ThrowHelper.ThrowDisposed(TypeName);
        }

        ThrowHelper.ThrowWentWithArena(TypeName);
    }

    /// <summary>Marks the current block as handed out (a growth keeps it); a read does it before it reads the version.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal void MarkHandedOut() => _handedOut = true;

    /// <summary>In an arena, holds the current block unless the writer holds it already (once per block).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal void HoldIfNeeded()
    {
        if (_holdsHandedOutBlocks && _held != _current)
        {
            Hold();
        }
    }

    /// <summary>Marks the block as handed out and, in an arena, holds it; under the writer's guard.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal void HandOut()
    {
        _handedOut = true;
        HoldIfNeeded();
    }

    /// <summary>Grows the block, if needed, to hold at least <paramref name="capacity"/> elements.</summary>
    /// <exception cref="ObjectDisposedException">The writer was disposed, or its arena reset.</exception>
    /// <exception cref="InvalidOperationException">The block must grow while a memory of it is pinned, or while an operation holds it.</exception>
    /// <exception cref="OverflowException">The grown capacity in bytes does not fit in the address space.</exception>
    /// <exception cref="OutOfMemoryException">The memory cannot be had; the blocks are unchanged.</exception>
    internal void EnsureCapacity(long capacity, in WriterPins pins)
    {
        if (capacity > _capacity)
        {
            // Doubling keeps the number of growths, and the bytes copied by those that cannot grow
            // in place, proportional to the data written.
            long grown = _capacity + Math.Max(_capacity, MinimumCapacity);
            if (grown > capacity)
            {
                try
                {
                    Resize(grown, pins);
                    return;
                }
                catch (OutOfMemoryException)
                {
                    // The doubled size is more than the memory (or the arena's budget) allows: the
                    // size needed may still fit.
                }
            }

            Resize(capacity, pins);
        }
    }

    /// <summary>
    /// Allocates the first block, or resizes the current one to <paramref name="capacity"/> elements:
    /// in place under a lease, or, for a growth after something of the block went out, by a move that
    /// keeps the old block. Bumps the version.
    /// </summary>
    /// <exception cref="ObjectDisposedException">The writer was disposed, or its arena reset.</exception>
    /// <exception cref="InvalidOperationException">A memory of the block is pinned, or an operation holds it; the blocks are unchanged.</exception>
    /// <exception cref="OverflowException">The capacity in bytes does not fit in the address space.</exception>
    /// <exception cref="OutOfMemoryException">The memory cannot be had; the blocks are unchanged.</exception>
    internal void Resize(long capacity, in WriterPins pins)
    {
        if (pins.IsPinned)
        {
            ThrowHelper.ThrowInvalidOperation("This NativeBufferWriter cannot move, resize or hand over its block while a Memory of it is pinned: dispose the MemoryHandle first.");
        }

        nuint bytes = AllocationSize.Of<T>(capacity);
        // A writer created without options follows HugePagePolicy as an array created without options
        // does: a growing block is first touched by the copy and the writes, where 4 KiB pages cost a
        // fault each.
        AllocationOptions options = _options ?? HugePagePolicy.DefaultForSize(bytes);
        if (_current.IsDefault)
        {
            // A dispose on another thread ran before (seen here) or waits until the block is recorded (and frees it).
            lock (_gate)
            {
                ThrowIfClosedOrFreed();
                _pointer = (T*)LedgerBlock.Allocate(bytes, options, AllocationKind.BufferWriter, ElementTypes.IdOf<T>(), out _current, zero: false);
            }
        }
        else if (capacity > _capacity && (Volatile.Read(ref _handedOut) || HoldsCurrent))
        {
            MoveKeepingOld(bytes, options);
        }
        else
        {
            // Under a lease, as the ledger's resize asks: nothing can free the block meanwhile. Only a
            // hand-over shrinks a held block, and it ends the spans of it.
            using LedgerBlock.LeaseScope lease = _current.Lease(TypeName);
            _pointer = (T*)_current.Resize(bytes, TypeName, options.HugePages, HoldsCurrent ? 1 : 0);
        }

        _capacity = capacity;
        _version++;
    }

    /// <summary>
    /// A lease on the whole current block (<see cref="Capacity"/> elements) for one operation of the
    /// caller, ended by its <see langword="using"/>; empty (and holding nothing) while no block is allocated.
    /// </summary>
    /// <exception cref="ObjectDisposedException">An arena reset freed the block.</exception>
    internal readonly MemoryLease<T> LeaseAll(object owner) =>
        _current.IsDefault ? default : _current.OpenLease(owner, _pointer, _capacity, TypeName, withToken: false);

    /// <summary>
    /// Hands the current block over, once the caller has shrunk it to the written elements
    /// (<see cref="Resize"/>): the hand-over ends the spans the writer handed out, so its hold of the
    /// block ends and the blocks growths kept are freed; the writer is left with no block, as if new.
    /// </summary>
    /// <returns>The block, which the caller gives its new owner.</returns>
    internal LedgerBlock Take()
    {
        LedgerBlock block = _current;
        if (_held == block)
        {
            // The new owner holds nothing.
            block.Release(TypeName);
            _held = default;
        }

        _current = default;
        _pointer = null;
        _capacity = 0;
        _version++;
        _handedOut = false;
        // A new writer's worth of growths would otherwise add to the kept blocks each time.
        FreeRetired();
        return block;
    }

    /// <summary>
    /// The writer's <c>Dispose</c>: frees every block and refuses every later use. Refused, with the
    /// blocks as they were, while a memory is pinned, another thread is writing, or an operation holds
    /// the block (a <see cref="NativeMemoryStream"/>'s read on another thread).
    /// </summary>
    /// <returns><see langword="false"/> if the writer was disposed already.</returns>
    /// <exception cref="InvalidOperationException">A memory of the block is pinned, another thread is writing, or an operation holds the block.</exception>
    internal bool Close(in WriterPins pins, in SingleWriterGuard guard)
    {
        lock (_gate)
        {
            if (_closed)
            {
                return false;
            }

            if (pins.IsPinned)
            {
                ThrowHelper.ThrowInvalidOperation("This NativeBufferWriter cannot be disposed while a Memory of it is pinned: dispose the MemoryHandle first.");
            }

            if (guard.IsHeld)
            {
                ThrowHelper.ThrowInvalidOperation("This NativeBufferWriter cannot be disposed while another thread is writing to it.");
            }

            if (!_current.IsDefault)
            {
                // First: a free refused because an operation holds the block leaves the writer as it
                // was, its hold included.
                try
                {
                    _current.Free(TypeName, HoldsCurrent ? 1 : 0);
                }
                catch (ObjectDisposedException) when (!_current.IsLive)
                {
                    // A reset of its arena freed it already (it held nothing).
                }

                _held = default;
            }

            FreeRetired();
            _closed = true;
            _version++;
            _pointer = null;
        }

        return true;
    }

    /// <summary>
    /// The first step of the finalizer of a writer never disposed: refuses every use from now on
    /// (another object's finalizer may resurrect the writer, or a handle of its pins).
    /// </summary>
    /// <returns><see langword="false"/> if there is nothing to do: disposed already, or no block was allocated.</returns>
    internal bool CloseForFinalizer()
    {
        if (_closed || _current.IsDefault)
        {
            return false;
        }

        _closed = true;
        return true;
    }

    /// <summary>
    /// The rest of the finalizer, with the <paramref name="pins"/> nobody can end any more: frees the
    /// block unless something of it went out (a span keeps nothing alive, so one may still be in use on
    /// a stack; a pin's pointer may be in native hands). Such blocks stay allocated, a leak the ledger
    /// lists; the writer's acquisitions of them end here, so that its arena can still be reset or
    /// destroyed, which frees them as every block of the arena.
    /// </summary>
    internal readonly void Abandon(int pins)
    {
        int held = HoldsCurrent ? 1 : 0;
        if (pins > 0 || _handedOut || _retired is not null)
        {
            EndAcquisitions(_current, pins + held);
            if (_retired is not null)
            {
                foreach ((LedgerBlock old, bool oldHeld) in _retired)
                {
                    EndAcquisitions(old, oldHeld ? 1 : 0);
                }
            }

            return;
        }

        try
        {
            _current.Free(TypeName, held);
        }
        catch (Exception e) when (e is ObjectDisposedException or InvalidOperationException)
        {
            // An arena reset freed it already; or a lease never closed holds it: left live (a
            // leak the ledger shows) rather than freed under a span.
        }

        static void EndAcquisitions(LedgerBlock block, int count)
        {
            for (; count > 0; count--)
            {
                try
                {
                    block.Release(TypeName);
                }
                catch (InvalidOperationException)
                {
                    // Its arena was reset or destroyed (ObjectDisposedException): nothing left to release, and a finalizer must not throw.
                    return;
                }
            }
        }
    }

    /// <summary>
    /// Whether the block the writer holds now was freed (by a reset of its arena). Read again after a
    /// first read found a freed block: that block may have been handed over meanwhile by a writer on
    /// another thread, and freed by its new array, while the writer itself holds a new one or none.
    /// </summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private readonly bool CurrentFreed()
    {
        LedgerBlock current = _current;
        return !current.IsDefault && !current.IsLive;
    }

    /// <summary>
    /// Acquires the current block for the spans handed out of it, once per block; under the gate a
    /// growth that keeps the old block takes, so a read on another thread and a growth agree on which
    /// block is held.
    /// </summary>
    /// <exception cref="ObjectDisposedException">A reset of the writer's arena freed the block.</exception>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private void Hold()
    {
        lock (_gate)
        {
            LedgerBlock current = _current;
            if (_closed || current.IsDefault || current == _held)
            {
                // Disposed meanwhile: the read's end check sees it.
                return;
            }

            current.Acquire(TypeName);
            _held = current;
        }
    }

    /// <summary>
    /// A growth after a span or memory of the block was handed out: a new block, a copy of the whole
    /// old one (elements written but not yet advanced included, as a resize keeps them), and the old
    /// block kept until a hand-over or dispose, so a span of it read on any thread meanwhile reads
    /// allocated memory. The caller sets the capacity and version.
    /// </summary>
    /// <exception cref="ObjectDisposedException">The writer was disposed, or its arena reset.</exception>
    /// <exception cref="OutOfMemoryException">The memory cannot be had; the blocks are unchanged.</exception>
    private void MoveKeepingOld(nuint bytes, AllocationOptions options)
    {
        // Under the gate a dispose takes: one that ran before is seen here, one that waits sees the new block.
        lock (_gate)
        {
            ThrowIfClosedOrFreed();
            LedgerBlock old = _current;
            // Under a lease on the old block, so an arena reset cannot free it under the copy.
            using (old.Lease(TypeName))
            {
                T* moved = (T*)LedgerBlock.Allocate(bytes, options, AllocationKind.BufferWriter, ElementTypes.IdOf<T>(), out LedgerBlock grown, zero: false);
                Buffer.MemoryCopy(_pointer, moved, (long)bytes, _capacity * sizeof(T));
                // The old block's hold, if any, goes with it: its spans are still out.
                (_retired ??= []).Add((old, _held == old));
                if (_held == old)
                {
                    _held = default;
                }

                _current = grown;
                _pointer = moved;
            }

            // Until a span of the new block goes out, a growth may free it.
            _handedOut = false;
        }
    }

    /// <summary>Frees the blocks growths kept; one still leased (by a stream's copy into itself) is left live, a leak the ledger shows, rather than freed under it.</summary>
    private void FreeRetired()
    {
        lock (_gate)
        {
            if (_retired is null)
            {
                return;
            }

            foreach ((LedgerBlock old, bool held) in _retired)
            {
                if (held)
                {
                    old.Release(TypeName);
                }

                // Nothing if an arena reset freed it already (one that held nothing).
                old.FreeOwned();
            }

            _retired = null;
        }
    }
}
