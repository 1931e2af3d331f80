using System.Buffers;
using System.Runtime.CompilerServices;
using jemalloc.IO;
using jemalloc.Internal;
using jemalloc.Ledger;

namespace jemalloc;

/// <summary>
/// An <see cref="IBufferWriter{T}"/> over one growing block of native memory, for
/// <c>Utf8JsonWriter</c>, serializers and any code that writes through the interface. The block is
/// allocated through the library's one allocation path, recorded in the <see cref="AllocationLedger"/>,
/// and grown with jemalloc's <c>rallocx</c>: in place when the pages after it are free, otherwise by
/// one copy into a new block. It can hold more than 2^31 elements where the memory allows.
/// </summary>
/// <typeparam name="T">Any unmanaged type.</typeparam>
/// <remarks>
/// <para>
/// Like <see cref="ArrayBufferWriter{T}"/>, one thread at a time may write to it, and this is checked:
/// a second thread that calls a writing member (<see cref="Advance"/>, <see cref="GetSpan"/>,
/// <see cref="GetMemory"/>, <see cref="Clear"/>, <see cref="ResetWrittenCount"/>, a hand-over, a pin,
/// an operation of a <see cref="NativeMemoryStream"/> over it) while another is inside one gets
/// <see cref="InvalidOperationException"/>, so two writers can never count past the block. A read of the
/// written elements (<see cref="WrittenSpan"/>, <see cref="GetWrittenSpan"/>, <see cref="WrittenSequence"/>,
/// a checked memory's span) that meets a write in progress throws the same; readers do not exclude
/// each other. A span already returned cannot be checked, but it never reads freed memory because of a
/// growth: a growth that moves the block after a span or memory of it was handed out keeps the old
/// block allocated, as a stale snapshot (as an <see cref="ArrayBufferWriter{T}"/>'s old array stays
/// readable), until the block is handed over or the writer disposed; the blocks kept hold fewer
/// elements than <see cref="Capacity"/>. A kept block is never written again; the current one is, in
/// place, by <see cref="Clear"/> and by writes after <see cref="ResetWrittenCount"/>, and a span of it
/// shows those. In an arena, a writer that handed out a span, memory or read of a block holds it (and
/// the blocks its growths kept) until it is disposed or hands its block over: the arena's reset or
/// destruction is refused meanwhile, as it is for a rented pool block. A writer dropped without
/// <see cref="Dispose"/> after handing something out leaves its blocks allocated (the ledger lists
/// them) rather than free them under a span still in use. A <see cref="Memory{T}"/>
/// from <see cref="GetMemory"/> is checked whenever it is used: after a growth it throws
/// <see cref="InvalidOperationException"/>, after <see cref="Dispose"/> <see cref="ObjectDisposedException"/>,
/// never reaching moved or freed memory. While it is pinned, the writer refuses to grow, hand over or be disposed, and its arena refuses to reset.
/// </para>
/// <para>
/// The memory handed out for writing is not cleared: it holds whatever was there (as an
/// <see cref="ArrayPool{T}"/> array does). Only written elements are exposed for reading.
/// </para>
/// <para>
/// The written elements can be handed over without a copy:
/// <see cref="NativeBufferWriterExtensions.DetachToHugeArray{T}"/> and
/// <see cref="NativeBufferWriterExtensions.DetachToSafeArray{T}"/> shrink the block to them and give it
/// to a new array, which owns it from then on; the writer starts again empty.
/// </para>
/// </remarks>
public sealed unsafe class NativeBufferWriter<T> : IBufferWriter<T>, IDisposable, IWriterGuarded
    where T : unmanaged
{
    private const string TypeName = "NativeBufferWriter";

    // The blocks, their growth, hand-over and end, the holds of them and the version each change bumps.
    private WriterBlocks<T> _blocks;

    // The pins of the checked memories handed out: while one is open the blocks refuse to change.
    private WriterPins _pins;
    private long _written;

    // The one-writer rule: every member that changes the block or the count enters it, so a second
    // thread that writes at the same time is refused instead of counting past the block.
    private SingleWriterGuard _guard;

    /// <summary>Creates an empty writer; nothing is allocated until the first write.</summary>
    public NativeBufferWriter()
    {
        _blocks = new WriterBlocks<T>(null, holdsHandedOutBlocks: false);
    }

    /// <summary>
    /// Creates an empty writer whose block is allocated and grown in <paramref name="arena"/>: every
    /// growth counts against the arena's budget. Once a span, memory or read of the block has gone
    /// out, the arena refuses to reset or be destroyed until the writer is disposed or hands its block
    /// over; before that (a writer only a <see cref="NativeMemoryStream"/> wrote through), a reset
    /// frees the block and the writer then throws <see cref="ObjectDisposedException"/>.
    /// </summary>
    /// <param name="arena">The arena to allocate in.</param>
    /// <param name="initialCapacity">The elements to make room for now; 0 allocates nothing until the first write.</param>
    /// <exception cref="ArgumentNullException"><paramref name="arena"/> is null.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="initialCapacity"/> is negative.</exception>
    /// <exception cref="ObjectDisposedException"><paramref name="arena"/> was destroyed.</exception>
    /// <exception cref="ArenaBudgetExceededException">The initial capacity would exceed the arena's budget.</exception>
    /// <exception cref="OverflowException">The capacity in bytes does not fit in the address space.</exception>
    /// <exception cref="OutOfMemoryException">The memory cannot be had.</exception>
    // RS0027 asks an overload with an optional parameter to have the most parameters; the overload
    // with options has as many, and its first parameter (a capacity, not an arena) keeps every call unambiguous.
#pragma warning disable RS0027
    public NativeBufferWriter(JemArena arena, long initialCapacity = 0)
#pragma warning restore RS0027
    {
        ArgumentNullException.ThrowIfNull(arena);
        if (initialCapacity < 0)
        {
            ThrowHelper.ThrowArgumentOutOfRange(nameof(initialCapacity), initialCapacity, "The initial capacity cannot be negative.");
        }

        ObjectDisposedException.ThrowIf(arena.IsDisposed, arena);
        _blocks = new WriterBlocks<T>(arena.Options, holdsHandedOutBlocks: true);
        if (initialCapacity > 0)
        {
            _blocks.Resize(initialCapacity, in _pins);
        }
    }

    /// <summary>Creates an empty writer with room for <paramref name="initialCapacity"/> elements.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="initialCapacity"/> is zero or negative.</exception>
    /// <exception cref="OverflowException">The capacity in bytes does not fit in the address space.</exception>
    /// <exception cref="OutOfMemoryException">The memory cannot be had.</exception>
    public NativeBufferWriter(long initialCapacity)
    {
        if (initialCapacity <= 0)
        {
            ThrowHelper.ThrowArgumentOutOfRange(nameof(initialCapacity), initialCapacity, "The initial capacity must be at least one element.");
        }

        _blocks = new WriterBlocks<T>(null, holdsHandedOutBlocks: false);
        _blocks.Resize(initialCapacity, in _pins);
    }

    /// <summary>
    /// Creates an empty writer with room for <paramref name="initialCapacity"/> elements, whose block is
    /// allocated, and grown, with <paramref name="options"/>: in the arena they name (a
    /// <see cref="JemArena"/>'s <see cref="JemArena.Options"/> count against its budget, and hold off its
    /// reset as <see cref="NativeBufferWriter{T}(JemArena, long)"/> describes), with their alignment and
    /// thread cache, and on transparent huge pages when <see cref="AllocationOptions.HugePages"/> is set.
    /// As with every block of the writer, the room is not cleared: a block written in full and handed
    /// over (<see cref="NativeBufferWriterExtensions.DetachToHugeArray{T}"/>) is touched once, by its writes.
    /// </summary>
    /// <param name="initialCapacity">The elements to make room for now.</param>
    /// <param name="options">How the block is allocated.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="initialCapacity"/> is zero or negative.</exception>
    /// <exception cref="ArgumentException"><paramref name="options"/> name a thread cache, arena or alignment that cannot be used.</exception>
    /// <exception cref="ObjectDisposedException"><paramref name="options"/> are those of a destroyed <see cref="JemArena"/>.</exception>
    /// <exception cref="ArenaBudgetExceededException">The initial capacity would exceed the arena's budget.</exception>
    /// <exception cref="OverflowException">The capacity in bytes does not fit in the address space.</exception>
    /// <exception cref="OutOfMemoryException">The memory cannot be had.</exception>
    public NativeBufferWriter(long initialCapacity, AllocationOptions options)
    {
        if (initialCapacity <= 0)
        {
            ThrowHelper.ThrowArgumentOutOfRange(nameof(initialCapacity), initialCapacity, "The initial capacity must be at least one element.");
        }

        // Options that name an arena (a JemArena's, or made by hand from its index) can meet a reset:
        // the writer then holds what it hands out, as one created with the arena does.
        _blocks = new WriterBlocks<T>(options, holdsHandedOutBlocks: options.Flags.ArenaIndex is not null);
        _blocks.Resize(initialCapacity, in _pins);
    }

    /// <summary>
    /// Frees the block of a writer that was never disposed, unless something of it went out: a span,
    /// memory or read of a block (a span keeps nothing alive, so one may still be in use on a stack),
    /// or a pin (its pointer may be in native hands). Such blocks stay allocated, a leak
    /// <see cref="AllocationLedger.Snapshot"/> lists, as a pool's dropped owner's block and a dropped
    /// pin of a managed array stay; the writer's acquisitions of them end here, so that its arena can
    /// still be reset or destroyed, which frees them as every block of the arena.
    /// </summary>
    ~NativeBufferWriter()
    {
        // Another object's finalizer may resurrect the writer or a handle of its pins: the writer
        // refuses every use from now on, and such a handle's dispose ends nothing (WriterPins.End).
        if (_blocks.CloseForFinalizer())
        {
            _blocks.Abandon(_pins.EndAllForFinalizer());
        }
    }

    /// <summary>The number of elements written (advanced).</summary>
    /// <exception cref="ObjectDisposedException">The writer was disposed.</exception>
    public long WrittenCount
    {
        get
        {
            ThrowIfDisposed();
            return _written;
        }
    }

    /// <summary>The number of elements the block holds now.</summary>
    /// <exception cref="ObjectDisposedException">The writer was disposed.</exception>
    public long Capacity
    {
        get
        {
            ThrowIfDisposed();
            return _blocks.Capacity;
        }
    }

    /// <summary>The number of elements that can be written before the block grows.</summary>
    /// <exception cref="ObjectDisposedException">The writer was disposed.</exception>
    public long FreeCapacity
    {
        get
        {
            ThrowIfDisposed();

            // The count first: the capacity only grows until a hand-over, so the difference is never negative.
            long written = Volatile.Read(ref _written);
            return Math.Max(0, _blocks.ReadCapacity() - written);
        }
    }

    /// <summary>The elements written so far; after a growth the span still reads them as they were, until a hand-over or dispose.</summary>
    /// <exception cref="ObjectDisposedException">The writer was disposed.</exception>
    /// <exception cref="InvalidOperationException">More than <see cref="int.MaxValue"/> elements were written (use <see cref="GetWrittenSpan"/>), or another thread is writing.</exception>
    public ReadOnlySpan<T> WrittenSpan
    {
        get
        {
            long version = BeginRead();
            long written = _written;
            T* pointer = _blocks.Pointer;
            EndRead(version);
            if (written > int.MaxValue)
            {
                ThrowHelper.ThrowInvalidOperation($"{written:N0} elements were written, more than one span can hold; read them with GetWrittenSpan(start, length).");
            }

            return new ReadOnlySpan<T>(pointer, (int)written);
        }
    }

    /// <summary>The written elements <c>[start, start + length)</c>; after a growth the span still reads them as they were, until a hand-over or dispose.</summary>
    /// <exception cref="ObjectDisposedException">The writer was disposed.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="start"/> is outside the written elements, or <paramref name="length"/> is negative or runs past them.</exception>
    /// <exception cref="InvalidOperationException">Another thread is writing.</exception>
    public ReadOnlySpan<T> GetWrittenSpan(long start, int length)
    {
        long version = BeginRead();
        long written = _written;
        T* pointer = _blocks.Pointer;
        EndRead(version);
        RangeGuard.CheckRange(start, length, written, nameof(start), nameof(length), "written data");
        return new ReadOnlySpan<T>(pointer + start, length);
    }

    /// <summary>
    /// The written elements as a checked <see cref="ReadOnlySequence{T}"/> over the block itself (no
    /// copy), in segments of at most 1 GiB, so it can hold more than 2^31 elements. Every segment's
    /// memory is checked when its span is taken: after a later growth it throws
    /// <see cref="InvalidOperationException"/>, after <see cref="Dispose"/> <see cref="ObjectDisposedException"/>,
    /// never reaching moved or freed memory. It shows the elements as they are when read: a
    /// <see cref="Clear"/> or an overwrite after a <see cref="ResetWrittenCount"/> shows through.
    /// </summary>
    /// <exception cref="ObjectDisposedException">The writer was disposed.</exception>
    /// <exception cref="InvalidOperationException">Another thread is writing.</exception>
    public ReadOnlySequence<T> WrittenSequence => GetWrittenSequence(Math.Max(1, (1 << 30) / sizeof(T)));

    /// <summary>Marks <paramref name="count"/> more elements of the span or memory last handed out as written.</summary>
    /// <exception cref="ObjectDisposedException">The writer was disposed.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="count"/> is negative.</exception>
    /// <exception cref="InvalidOperationException"><paramref name="count"/> goes past the end of the buffer, or another thread is writing.</exception>
    public void Advance(int count)
    {
        BeginWrite();
        try
        {
            if (count < 0)
            {
                ThrowHelper.ThrowArgumentOutOfRange(nameof(count), count, "The count of elements to advance cannot be negative.");
            }

            if (count > _blocks.Capacity - _written)
            {
                ThrowHelper.ThrowInvalidOperation($"Cannot advance {count:N0} elements past the end of the buffer: {_blocks.Capacity - _written:N0} elements are free. Ask GetSpan or GetMemory for room first.");
            }

            _written += count;
        }
        finally
        {
            EndWrite();
        }
    }

    /// <summary>A span to write at least <paramref name="sizeHint"/> elements (at least one for 0), growing the block if needed.</summary>
    /// <exception cref="ObjectDisposedException">The writer was disposed.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="sizeHint"/> is negative.</exception>
    /// <exception cref="InvalidOperationException">The block must grow while a <see cref="Memory{T}"/> of it is pinned, or another thread is writing.</exception>
    /// <exception cref="OverflowException">The grown capacity in bytes does not fit in the address space.</exception>
    /// <exception cref="OutOfMemoryException">The memory cannot be had; the writer is unchanged.</exception>
    public Span<T> GetSpan(int sizeHint = 0)
    {
        BeginWrite();
        try
        {
            int length = Reserve(sizeHint);
            _blocks.HandOut();
            return new Span<T>(_blocks.Pointer + _written, length);
        }
        finally
        {
            EndWrite();
        }
    }

    /// <summary>
    /// A checked memory to write at least <paramref name="sizeHint"/> elements (at least one for 0),
    /// growing the block if needed. Using it after a later growth or <see cref="Dispose"/> throws.
    /// </summary>
    /// <exception cref="ObjectDisposedException">The writer was disposed.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="sizeHint"/> is negative.</exception>
    /// <exception cref="InvalidOperationException">The block must grow while a <see cref="Memory{T}"/> of it is pinned, or another thread is writing.</exception>
    /// <exception cref="OverflowException">The grown capacity in bytes does not fit in the address space.</exception>
    /// <exception cref="OutOfMemoryException">The memory cannot be had; the writer is unchanged.</exception>
    public Memory<T> GetMemory(int sizeHint = 0)
    {
        BeginWrite();
        try
        {
            int length = Reserve(sizeHint);
            _blocks.HandOut();
            return new WriterMemory<T>(this, _blocks.Version, _written, length).AsMemory();
        }
        finally
        {
            EndWrite();
        }
    }

    /// <summary>Clears the written elements and starts again at the beginning; the block is kept.</summary>
    /// <exception cref="ObjectDisposedException">The writer was disposed.</exception>
    /// <exception cref="InvalidOperationException">Another thread is writing.</exception>
    public void Clear()
    {
        BeginWrite();
        try
        {
            for (long done = 0; done < _written;)
            {
                int chunk = (int)Math.Min(_written - done, int.MaxValue);
                new Span<T>(_blocks.Pointer + done, chunk).Clear();
                done += chunk;
            }

            _written = 0;
        }
        finally
        {
            EndWrite();
        }
    }

    /// <summary>Starts again at the beginning without clearing; the block is kept.</summary>
    /// <exception cref="ObjectDisposedException">The writer was disposed.</exception>
    /// <exception cref="InvalidOperationException">Another thread is writing.</exception>
    public void ResetWrittenCount()
    {
        BeginWrite();
        _written = 0;
        EndWrite();
    }

    /// <summary>Frees the block; every later member call throws <see cref="ObjectDisposedException"/>. Disposing again does nothing.</summary>
    /// <exception cref="InvalidOperationException">A <see cref="Memory{T}"/> of the block is pinned, an operation of a stream over it is running, or another thread is writing; nothing was freed.</exception>
    public void Dispose()
    {
        // Under the gate the first allocation takes: a NativeMemoryStream lets the owner dispose the
        // writer on any thread, and a dispose that missed a block being allocated would leak it.
        if (_blocks.Close(in _pins, in _guard))
        {
            GC.SuppressFinalize(this);
        }
    }

    /// <summary>The span of a <see cref="WriterMemory{T}"/> made at <paramref name="version"/>, checked now.</summary>
    /// <exception cref="ObjectDisposedException">The writer was disposed.</exception>
    /// <exception cref="InvalidOperationException">The block grew since, or another thread is writing.</exception>
    internal T* PointerFor(long version, long offset)
    {
        long now = BeginRead();
        T* pointer = _blocks.Pointer;
        EndRead(now);
        if (version != now)
        {
            ThrowHelper.ThrowInvalidOperation("The NativeBufferWriter's block grew or was handed over since this Memory was taken: ask the writer again.");
        }

        return pointer + offset;
    }

    /// <summary>
    /// Hands the block over: shrinks it to the written elements (in place where jemalloc can) and
    /// leaves the writer empty, as if new. The caller makes the structure that owns the block from then
    /// on (it records itself as the owner in the ledger).
    /// </summary>
    /// <exception cref="ObjectDisposedException">The writer was disposed.</exception>
    /// <exception cref="InvalidOperationException">Nothing was written, more than <paramref name="maxLength"/> elements were, or a memory of the block is pinned or in use.</exception>
    /// <exception cref="OutOfMemoryException">The block could not be shrunk; the writer is unchanged.</exception>
    internal LedgerBlock Detach(long maxLength, out T* pointer, out long length)
    {
        BeginWrite();
        try
        {
            return DetachCore(maxLength, out pointer, out length);
        }
        finally
        {
            EndWrite();
        }
    }

    /// <summary>Whether the writer was disposed, or its block freed by a reset of its arena.</summary>
    internal bool IsDisposed => _blocks.IsClosedOrFreed;

    /// <summary>
    /// Whether <see cref="Dispose"/> (or the finalizer) ran: what the guard checks before and after
    /// entering. A reset of the writer's arena is checked once, before, by <see cref="BeginWrite"/>
    /// (a handle check costs a look-up in the ledger's table).
    /// </summary>
    bool IWriterGuarded.IsDisposed => _blocks.IsClosed;

    /// <summary>
    /// Pins the block for a <see cref="WriterMemory{T}"/> made at <paramref name="version"/>: until
    /// <see cref="Unpin"/>, the writer refuses to grow, hand over or be disposed, and the ledger refuses
    /// to free the block (an arena reset included), since a pin's pointer is used outside any check.
    /// </summary>
    /// <exception cref="ObjectDisposedException">The writer was disposed.</exception>
    /// <exception cref="InvalidOperationException">The block grew since.</exception>
    internal T* Pin(long version, long offset)
    {
        BeginWrite();
        try
        {
            if (version != _blocks.Version)
            {
                ThrowHelper.ThrowInvalidOperation("The NativeBufferWriter's block grew or was handed over since this Memory was taken: ask the writer again.");
            }

            _pins.Add(_blocks.Current, TypeName);
            return _blocks.Pointer + offset;
        }
        finally
        {
            EndWrite();
        }
    }

    /// <summary>Ends a <see cref="Pin"/>: the block was neither moved nor freed while it was pinned.</summary>
    internal void Unpin() => _pins.End(_blocks.Current, TypeName);

    /// <summary>The written elements as a sequence of checked segments of at most <paramref name="maxSegmentLength"/> elements.</summary>
    /// <exception cref="ObjectDisposedException">The writer was disposed.</exception>
    /// <exception cref="InvalidOperationException">Another thread is writing.</exception>
    internal ReadOnlySequence<T> GetWrittenSequence(int maxSegmentLength)
    {
        // The count is read once, under the read check: each segment's memory checks the version.
        long version = BeginRead();
        long written = _written;
        EndRead(version);
        return WrittenSegment<T>.Sequence(this, version, written, maxSegmentLength);
    }

    /// <summary>
    /// A lease on the whole block (<see cref="Capacity"/> elements) for one operation of the caller:
    /// until it is disposed, a <see cref="Dispose"/> on another thread is refused instead of freeing
    /// the block under the operation. Empty (and holding nothing) while no block is allocated.
    /// The caller must not grow the writer while it holds the lease.
    /// </summary>
    /// <exception cref="ObjectDisposedException">The writer was disposed.</exception>
    /// <exception cref="InvalidOperationException">Another thread is writing.</exception>
    internal MemoryLease<T> BeginOperation()
    {
        BeginWrite();
        try
        {
            return _blocks.LeaseAll(this);
        }
        finally
        {
            EndWrite();
        }
    }

    /// <summary>Grows the block, if needed, so that <paramref name="length"/> elements fit, and makes them the written ones.</summary>
    /// <remarks>The elements past the old written count are not cleared: the caller writes them.</remarks>
    /// <exception cref="ObjectDisposedException">The writer was disposed.</exception>
    /// <exception cref="InvalidOperationException">The block must grow while a <see cref="Memory{T}"/> of it is pinned.</exception>
    /// <exception cref="OverflowException">The grown capacity in bytes does not fit in the address space.</exception>
    /// <exception cref="OutOfMemoryException">The memory cannot be had; the writer is unchanged.</exception>
    /// <param name="length">The elements to make room for.</param>
    /// <param name="keepOld">Whether a growth must keep the old block (the caller is reading from it, under a lease of its own).</param>
    internal void EnsureCapacityFor(long length, bool keepOld = false)
    {
        BeginWrite();
        try
        {
            if (keepOld)
            {
                _blocks.MarkHandedOut();
            }

            _blocks.EnsureCapacity(length, in _pins);
        }
        finally
        {
            EndWrite();
        }
    }

    /// <summary>
    /// Sets the written count to <paramref name="length"/>, which the caller made room for; a count past
    /// the block (room taken away meanwhile by a hand-over) is refused rather than set.
    /// </summary>
    /// <exception cref="InvalidOperationException">The block no longer holds <paramref name="length"/> elements, or another thread is writing.</exception>
    internal void SetWrittenCount(long length)
    {
        BeginWrite();
        try
        {
            if ((ulong)length > (ulong)_blocks.Capacity)
            {
                ThrowHelper.ThrowInvalidOperation($"The NativeBufferWriter's block holds {_blocks.Capacity:N0} elements, fewer than {length:N0}: it was handed over meanwhile.");
            }

            _written = length;
        }
        finally
        {
            EndWrite();
        }
    }

    private int Reserve(int sizeHint)
    {
        if (sizeHint < 0)
        {
            ThrowHelper.ThrowArgumentOutOfRange(nameof(sizeHint), sizeHint, "The size hint cannot be negative.");
        }

        _blocks.EnsureCapacity(_written + Math.Max(sizeHint, 1), in _pins);
        return (int)Math.Min(_blocks.Capacity - _written, int.MaxValue);
    }

    private LedgerBlock DetachCore(long maxLength, out T* pointer, out long length)
    {
        if (_written == 0)
        {
            ThrowHelper.ThrowInvalidOperation("Nothing was written to this NativeBufferWriter: an array needs at least one element.");
        }

        if (_written > maxLength)
        {
            ThrowHelper.ThrowInvalidOperation($"{_written:N0} elements were written, more than the array can hold ({maxLength:N0}); detach to a HugeArray instead.");
        }

        // Through the ledger's resize even when the block is full (then in place): it refuses while a
        // pin, or an operation of a stream over the writer, still uses the block.
        _blocks.Resize(_written, in _pins);
        pointer = _blocks.Pointer;
        length = _written;
        LedgerBlock block = _blocks.Take();
        // After the capacity: FreeCapacity, which reads the count first, never finds it past the capacity.
        _written = 0;
        return block;
    }

    /// <summary>Enters as the one writer; throws if the writer is disposed or another thread is writing.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void BeginWrite()
    {
        ThrowIfDisposed();
        _guard.Enter(this, TypeName, "a write, or a NativeMemoryStream's ToArray, CopyTo or Read over this writer");
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void EndWrite() => _guard.Exit();

    /// <summary>
    /// Starts a read of the block and the count without entering as the writer (readers do not
    /// exclude each other): returns the version, to be passed to <see cref="EndRead"/> once they are read.
    /// </summary>
    /// <exception cref="ObjectDisposedException">The writer was disposed.</exception>
    /// <exception cref="InvalidOperationException">Another thread is writing.</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private long BeginRead()
    {
        ThrowIfDisposed();
        // Before EndRead's barrier: a writer that enters after the read's checks passed sees it, and
        // its growth keeps the block the read hands out.
        _blocks.MarkHandedOut();
        long version = _blocks.ReadVersion();
        if (_guard.IsHeld)
        {
            ThrowWriting();
        }

        // After the version: EndRead then proves that the block held is the one the read hands out.
        _blocks.HoldIfNeeded();
        return version;
    }

    /// <summary>Ends a read: what was read is one state of the writer if no write began or ended since <see cref="BeginRead"/>.</summary>
    /// <exception cref="InvalidOperationException">Another thread wrote meanwhile.</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void EndRead(long version)
    {
        Interlocked.MemoryBarrier();
        if (_guard.IsHeld || _blocks.ReadVersion() != version)
        {
            ThrowWriting();
        }
    }

    private static void ThrowWriting() =>
        ThrowHelper.ThrowInvalidOperation($"Another thread is writing to this {TypeName}: read it when the writer is done (it has one writer at a time).");

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal void ThrowIfDisposed() => _blocks.ThrowIfClosedOrFreed();
}
