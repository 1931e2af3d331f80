using System.Buffers;
using System.Runtime.CompilerServices;
using jemalloc.IO;
using jemalloc.Internal;
using jemalloc.Ledger;
using jemalloc.Memory;

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
    private const int MinimumCapacity = 256;
    private const string TypeName = "NativeBufferWriter";
    private AllocationHandle _handle;
    private T* _pointer;
    private long _capacity;
    private long _written;
    // A long, so no number of growths or hand-overs can wrap it back to a stale memory's version.
    private long _version;
    private int _pins;

    // The pin count of a writer whose finalizer ended the pins nobody could end any more.
    private const int PinsEndedByFinalizer = int.MinValue;
    private bool _disposed;

    // Whether a span, memory or sequence of the block went out since it was last moved: a growth then
    // keeps the old block (_retired) instead of freeing it, since that span may still be read.
    private bool _handedOut;

    // Blocks left by growths, kept allocated (stale, never written again) until a hand-over or
    // Dispose; with the doubling growth they hold fewer bytes than the block itself. Held: whether
    // the writer acquired it for the spans it handed out (see _held).
    private List<(AllocationHandle Handle, bool Held)>? _retired;

    // In an arena, the block a span, memory or read went out of is acquired (held) by the writer
    // until a hand-over or Dispose, so that a reset of the arena is refused instead of freeing it
    // under that span; the kept blocks stay held with it. Outside an arena only the writer frees
    // its blocks, so nothing is held.
    private AllocationHandle _held;
    private readonly bool _holdsHandedOutBlocks;
    private readonly AllocationOptions _options;
    private readonly Lock _gate = new();

    // The one-writer rule: every member that changes the block or the count enters it, so a second
    // thread that writes at the same time is refused instead of counting past the block.
    private SingleWriterGuard _guard;

    /// <summary>Creates an empty writer; nothing is allocated until the first write.</summary>
    public NativeBufferWriter()
    {
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
    public NativeBufferWriter(JemArena arena, long initialCapacity = 0)
    {
        ArgumentNullException.ThrowIfNull(arena);
        if (initialCapacity < 0)
        {
            ThrowHelper.ThrowArgumentOutOfRange(nameof(initialCapacity), initialCapacity, "The initial capacity cannot be negative.");
        }

        ObjectDisposedException.ThrowIf(arena.IsDisposed, arena);
        _options = arena.Options;
        _holdsHandedOutBlocks = true;
        if (initialCapacity > 0)
        {
            Resize(initialCapacity);
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

        Resize(initialCapacity);
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
        if (_disposed || _handle == default)
        {
            return;
        }

        // Another object's finalizer may resurrect the writer or a handle of its pins: the writer
        // refuses every use from now on, and such a handle's dispose ends nothing (Unpin).
        _disposed = true;
        int pins = Interlocked.Exchange(ref _pins, PinsEndedByFinalizer);
        int held = HoldsBlock ? 1 : 0;
        if (pins > 0 || _handedOut || _retired is not null)
        {
            EndAcquisitions(_handle, pins + held);
            if (_retired is not null)
            {
                foreach ((AllocationHandle old, bool oldHeld) in _retired)
                {
                    EndAcquisitions(old, oldHeld ? 1 : 0);
                }
            }

            return;
        }

        try
        {
            AllocationLedger.Free(_handle, nameof(NativeBufferWriter<T>), held);
        }
        catch (Exception e) when (e is ObjectDisposedException or InvalidOperationException)
        {
            // An arena reset freed it already; or a lease never closed holds it: left live (a
            // leak the ledger shows) rather than freed under a span.
        }

        static void EndAcquisitions(AllocationHandle handle, int count)
        {
            for (; count > 0; count--)
            {
                try
                {
                    AllocationLedger.Release(handle, nameof(NativeBufferWriter<T>));
                }
                catch (InvalidOperationException)
                {
                    // Its arena was reset or destroyed (ObjectDisposedException): nothing left to release, and a finalizer must not throw.
                    return;
                }
            }
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
            return _capacity;
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
            return Math.Max(0, Volatile.Read(ref _capacity) - written);
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
            T* pointer = _pointer;
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
        T* pointer = _pointer;
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

            if (count > _capacity - _written)
            {
                ThrowHelper.ThrowInvalidOperation($"Cannot advance {count:N0} elements past the end of the buffer: {_capacity - _written:N0} elements are free. Ask GetSpan or GetMemory for room first.");
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
            HandOut();
            return new Span<T>(_pointer + _written, length);
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
            HandOut();
            return new WriterMemory<T>(this, _version, _written, length).AsMemory();
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
                new Span<T>(_pointer + done, chunk).Clear();
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
        lock (_gate)
        {
            if (_disposed)
            {
                return;
            }

            if (Volatile.Read(ref _pins) != 0)
            {
                ThrowHelper.ThrowInvalidOperation("This NativeBufferWriter cannot be disposed while a Memory of it is pinned: dispose the MemoryHandle first.");
            }

            if (_guard.IsHeld)
            {
                ThrowHelper.ThrowInvalidOperation("This NativeBufferWriter cannot be disposed while another thread is writing to it.");
            }

            if (_handle != default)
            {
                // First: a free refused because an operation holds the block (a NativeMemoryStream's
                // read on another thread) leaves the writer as it was, its hold included.
                try
                {
                    AllocationLedger.Free(_handle, nameof(NativeBufferWriter<T>), HoldsBlock ? 1 : 0);
                }
                catch (ObjectDisposedException) when (!_handle.IsValid)
                {
                    // A reset of its arena freed it already (it held nothing).
                }

                _held = default;
            }

            FreeRetired();
            _disposed = true;
            _version++;
            _pointer = null;
        }

        GC.SuppressFinalize(this);
    }

    /// <summary>The span of a <see cref="WriterMemory{T}"/> made at <paramref name="version"/>, checked now.</summary>
    /// <exception cref="ObjectDisposedException">The writer was disposed.</exception>
    /// <exception cref="InvalidOperationException">The block grew since, or another thread is writing.</exception>
    internal T* PointerFor(long version, long offset)
    {
        long now = BeginRead();
        T* pointer = _pointer;
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
            return new LedgerBlock(DetachCore(maxLength, out pointer, out length));
        }
        finally
        {
            EndWrite();
        }
    }

    private AllocationHandle DetachCore(long maxLength, out T* pointer, out long length)
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
        Resize(_written);

        AllocationHandle handle = _handle;
        if (_held == handle)
        {
            // The hand-over ends the spans the writer handed out: the new owner holds nothing.
            AllocationLedger.Release(handle, nameof(NativeBufferWriter<T>));
            _held = default;
        }

        pointer = _pointer;
        length = _written;
        _handle = default;
        _pointer = null;
        // The count first: a reader of FreeCapacity reads it first.
        _written = 0;
        _capacity = 0;
        _version++;
        _handedOut = false;
        // The hand-over ends the spans of the writer's blocks: the ones growths kept go now (a new
        // writer's worth of growths would otherwise add to them each time).
        FreeRetired();
        return handle;
    }

    /// <summary>Whether the writer was disposed, or its block freed by a reset of its arena.</summary>
    internal bool IsDisposed => _disposed || (_handle != default && !_handle.IsValid && HandleFreed());

    /// <summary>
    /// Whether <see cref="Dispose"/> (or the finalizer) ran: what the guard checks before and after
    /// entering. A reset of the writer's arena is checked once, before, by <see cref="BeginWrite"/>
    /// (a handle check costs a look-up in the ledger's table).
    /// </summary>
    bool IWriterGuarded.IsDisposed => _disposed;

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
            if (version != _version)
            {
                ThrowHelper.ThrowInvalidOperation("The NativeBufferWriter's block grew or was handed over since this Memory was taken: ask the writer again.");
            }

            AllocationLedger.Acquire(_handle, nameof(NativeBufferWriter<T>));
            Interlocked.Increment(ref _pins);
            return _pointer + offset;
        }
        finally
        {
            EndWrite();
        }
    }

    /// <summary>Ends a <see cref="Pin"/>: the block was neither moved nor freed while it was pinned.</summary>
    internal void Unpin()
    {
        if (Volatile.Read(ref _pins) == PinsEndedByFinalizer)
        {
            // The finalizer ended this pin: its handle was resurrected by another object's finalizer.
            return;
        }

        // Released first: a dispose that sees no pin must find the block free to go.
        AllocationLedger.Release(_handle, nameof(NativeBufferWriter<T>));
        Interlocked.Decrement(ref _pins);
    }

    /// <summary>The written elements as a sequence of checked segments of at most <paramref name="maxSegmentLength"/> elements.</summary>
    /// <exception cref="ObjectDisposedException">The writer was disposed.</exception>
    /// <exception cref="InvalidOperationException">Another thread is writing.</exception>
    internal ReadOnlySequence<T> GetWrittenSequence(int maxSegmentLength)
    {
        // The count is read once, under the read check: each segment's memory checks the version.
        long version = BeginRead();
        long written = _written;
        EndRead(version);
        if (written == 0)
        {
            return ReadOnlySequence<T>.Empty;
        }

        if (written <= maxSegmentLength)
        {
            return new ReadOnlySequence<T>(new WriterMemory<T>(this, version, 0, (int)written).AsMemory());
        }

        WrittenSegment<T>? first = null;
        WrittenSegment<T>? last = null;
        for (long offset = 0; offset < written;)
        {
            int length = (int)Math.Min(written - offset, maxSegmentLength);
            var segment = new WrittenSegment<T>(new WriterMemory<T>(this, version, offset, length).AsMemory(), offset);
            if (last is null)
            {
                first = segment;
            }
            else
            {
                last.Append(segment);
            }

            last = segment;
            offset += length;
        }

        return new ReadOnlySequence<T>(first!, 0, last!, last!.Memory.Length);
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
            if (_handle == default)
            {
                return default;
            }

            AllocationLedger.EnterLease(_handle, nameof(NativeBufferWriter<T>));
            return new MemoryLease<T>(this, _pointer, _capacity, _handle, default);
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
                _handedOut = true;
            }

            EnsureCapacity(length);
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
            if ((ulong)length > (ulong)_capacity)
            {
                ThrowHelper.ThrowInvalidOperation($"The NativeBufferWriter's block holds {_capacity:N0} elements, fewer than {length:N0}: it was handed over meanwhile.");
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

        EnsureCapacity(_written + Math.Max(sizeHint, 1));
        return (int)Math.Min(_capacity - _written, int.MaxValue);
    }

    /// <summary>Grows the block, if needed, to hold at least <paramref name="capacity"/> elements.</summary>
    private void EnsureCapacity(long capacity)
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
                    Resize(grown);
                    return;
                }
                catch (OutOfMemoryException)
                {
                    // The doubled size is more than the memory (or the arena's budget) allows: the
                    // size needed may still fit.
                }
            }

            Resize(capacity);
        }
    }

    private void Resize(long capacity)
    {
        if (Volatile.Read(ref _pins) != 0)
        {
            ThrowHelper.ThrowInvalidOperation("This NativeBufferWriter cannot move, resize or hand over its block while a Memory of it is pinned: dispose the MemoryHandle first.");
        }

        nuint bytes = AllocationSize.Of<T>(capacity);
        // Outside an arena a writer follows HugePagePolicy as an array created without options does:
        // a growing block is first touched by the copy and the writes, where 4 KiB pages cost a
        // fault each.
        AllocationOptions options = _options == default ? HugePagePolicy.DefaultForSize(bytes) : _options;
        if (_handle == default)
        {
            // A dispose on another thread ran before (seen here) or waits until the block is recorded (and frees it).
            lock (_gate)
            {
                ThrowIfDisposed();
                _pointer = (T*)AllocationLedger.Allocate(bytes, options, AllocationKind.BufferWriter, ElementTypes.IdOf<T>(), 0, null, out _handle, zero: false);
            }
        }
        else if (capacity > _capacity && (Volatile.Read(ref _handedOut) || HoldsBlock))
        {
            MoveKeepingOld(bytes, options);
        }
        else
        {
            // Under a lease, as the ledger's resize asks: nothing can free the block meanwhile. Only a
            // hand-over shrinks a held block, and it ends the spans of it.
            AllocationLedger.EnterLease(_handle, nameof(NativeBufferWriter<T>));
            try
            {
                _pointer = (T*)AllocationLedger.Reallocate(_handle, bytes, nameof(NativeBufferWriter<T>), options.HugePages, HoldsBlock ? 1 : 0);
            }
            finally
            {
                AllocationLedger.ExitLease(_handle);
            }
        }

        _capacity = capacity;
        _version++;
    }

    /// <summary>
    /// A growth after a span or memory of the block was handed out: a new block, a copy of the whole
    /// old one (elements written but not yet advanced included, as a resize keeps them), and the old
    /// block kept until a hand-over or <see cref="Dispose"/>, so a span of it read on any thread
    /// meanwhile reads allocated memory. The caller sets the capacity and version.
    /// </summary>
    /// <exception cref="ObjectDisposedException">The writer was disposed, or its arena reset.</exception>
    /// <exception cref="OutOfMemoryException">The memory cannot be had; the writer is unchanged.</exception>
    private void MoveKeepingOld(nuint bytes, AllocationOptions options)
    {
        // Under the gate a dispose takes: one that ran before is seen here, one that waits sees the new block.
        lock (_gate)
        {
            ThrowIfDisposed();
            AllocationHandle old = _handle;
            // Under a lease on the old block, so an arena reset cannot free it under the copy.
            AllocationLedger.EnterLease(old, nameof(NativeBufferWriter<T>));
            try
            {
                T* moved = (T*)AllocationLedger.Allocate(bytes, options, AllocationKind.BufferWriter, ElementTypes.IdOf<T>(), 0, null, out AllocationHandle grown, zero: false);
                Buffer.MemoryCopy(_pointer, moved, (long)bytes, _capacity * sizeof(T));
                // The old block's hold, if any, goes with it: its spans are still out.
                (_retired ??= []).Add((old, _held == old));
                if (_held == old)
                {
                    _held = default;
                }

                _handle = grown;
                _pointer = moved;
            }
            finally
            {
                AllocationLedger.ExitLease(old);
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

            foreach ((AllocationHandle old, bool held) in _retired)
            {
                if (held)
                {
                    AllocationLedger.Release(old, nameof(NativeBufferWriter<T>));
                }

                // Nothing if an arena reset freed it already (one that held nothing).
                AllocationLedger.FreeOwned(old);
            }

            _retired = null;
        }
    }

    /// <summary>
    /// Whether the block the writer holds now was freed (by a reset of its arena). Read again after a
    /// first read found a freed handle: that handle may have been handed over meanwhile by a writer on
    /// another thread, and freed by its new array, while the writer itself holds a new one or none.
    /// </summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private bool HandleFreed()
    {
        AllocationHandle handle = _handle;
        return handle != default && !handle.IsValid;
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
        _handedOut = true;
        long version = Volatile.Read(ref _version);
        if (_guard.IsHeld)
        {
            ThrowWriting();
        }

        // After the version: EndRead then proves that the block held is the one the read hands out.
        if (_holdsHandedOutBlocks && _held != _handle)
        {
            HoldBlock();
        }

        return version;
    }

    /// <summary>Marks the block as handed out (a growth keeps it) and, in an arena, holds it; under the writer's guard.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void HandOut()
    {
        _handedOut = true;
        if (_holdsHandedOutBlocks && _held != _handle)
        {
            HoldBlock();
        }
    }

    /// <summary>Whether the writer holds its current block for the spans it handed out.</summary>
    private bool HoldsBlock => _held != default && _held == _handle;

    /// <summary>
    /// Acquires the current block for the spans handed out of it, once per block; under the gate a
    /// growth that keeps the old block takes, so a read on another thread and a growth agree on which
    /// block is held.
    /// </summary>
    /// <exception cref="ObjectDisposedException">A reset of the writer's arena freed the block.</exception>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private void HoldBlock()
    {
        lock (_gate)
        {
            AllocationHandle handle = _handle;
            if (_disposed || handle == default || handle == _held)
            {
                // Disposed meanwhile: the read's end check sees it.
                return;
            }

            AllocationLedger.Acquire(handle, nameof(NativeBufferWriter<T>));
            _held = handle;
        }
    }

    /// <summary>Ends a read: what was read is one state of the writer if no write began or ended since <see cref="BeginRead"/>.</summary>
    /// <exception cref="InvalidOperationException">Another thread wrote meanwhile.</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void EndRead(long version)
    {
        Interlocked.MemoryBarrier();
        if (_guard.IsHeld || Volatile.Read(ref _version) != version)
        {
            ThrowWriting();
        }
    }

    private static void ThrowWriting() =>
        ThrowHelper.ThrowInvalidOperation($"Another thread is writing to this {TypeName}: read it when the writer is done (it has one writer at a time).");

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void ThrowIfDisposed()
    {
        // A block in an arena can be freed by the arena's reset: one load and compare sees it.
        if (_disposed || (_handle != default && !_handle.IsValid && HandleFreed()))
        {
            ThrowHelper.ThrowObjectDisposed(nameof(NativeBufferWriter<T>));
        }
    }
}
