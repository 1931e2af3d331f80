using System.Buffers;

namespace jemalloc.Arrow.Internal;

/// <summary>
/// A byte range of a native structure as <see cref="Memory{T}"/>, for Arrow buffers: no copy.
/// </summary>
/// <remarks>
/// <para>
/// It holds the structure (<see cref="NativeBuffer{T}.Hold"/>) while it is alive or pinned: the
/// structure cannot be disposed nor its arena reset meanwhile, and no <see cref="NativeBuffer{T}.Release"/>
/// from user code can end the hold. The hold ends when the memory is disposed and its last pin has
/// ended, whichever comes last (a C Data Interface export pins the buffers it hands out, so a C
/// consumer keeps the block after the managed side let go); if the memory is dropped without either,
/// the hold's finalizer ends it once nothing can reach the memory any more.
/// </para>
/// <para>
/// A pin ends only through the <see cref="MemoryHandle"/> its <see cref="Pin"/> returned, once, however
/// many copies of the handle are disposed: <see cref="Unpin"/> cannot tell whose pin it would end and
/// refuses. Once disposed, <see cref="GetSpan"/> and <see cref="Pin"/> throw instead of handing out
/// memory that may be freed. With <c>owns</c>, the end of the hold also frees the structure (the
/// allocator's blocks, which Arrow disposes when it is done with them).
/// </para>
/// </remarks>
internal sealed unsafe class NativeBlockMemory<T> : MemoryManager<byte>
    where T : unmanaged, IEquatable<T>
{
    private readonly NativeBuffer<T> _buffer;
    private readonly MemoryHold _hold;
    private readonly byte* _pointer;
    private readonly int _length;
    private readonly bool _owns;
    // This memory's own reference (until Dispose) plus one per pin not yet ended; the hold ends at 0.
    private int _references = 1;
    private int _disposed;

    private NativeBlockMemory(NativeBuffer<T> buffer, MemoryHold hold, long byteOffset, int length, bool owns)
    {
        _buffer = buffer;
        _hold = hold;
        // Read under the hold: the structure cannot go away between this and the end of the hold.
        _pointer = (byte*)buffer.Pointer + byteOffset;
        _length = length;
        _owns = owns;
    }

    internal nint Address => (nint)_pointer;

    /// <summary>Bytes <c>[byteOffset, byteOffset + length)</c> of <paramref name="buffer"/>, which stays the caller's; held until this memory and its pins are done.</summary>
    /// <exception cref="ObjectDisposedException">The structure was disposed.</exception>
    /// <exception cref="InvalidOperationException">It is held the most times the ledger counts.</exception>
    internal static NativeBlockMemory<T> View(NativeBuffer<T> buffer, long byteOffset, int length) =>
        Create(buffer, byteOffset, length, owns: false);

    /// <summary>The whole of <paramref name="block"/>, a block made for Arrow, which this memory frees when Arrow and every pin are done with it.</summary>
    /// <exception cref="ObjectDisposedException">An arena reset freed the block already.</exception>
    internal static NativeBlockMemory<T> Owning(NativeBuffer<T> block, int length) => Create(block, 0, length, owns: true);

    public override Span<byte> GetSpan()
    {
        ThrowIfDisposed();
        return new Span<byte>(_pointer, _length);
    }

    public override MemoryHandle Pin(int elementIndex = 0)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(elementIndex);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(elementIndex, _length);
        ThrowIfDisposed();
        while (true)
        {
            int references = Volatile.Read(ref _references);
            if (references == 0)
            {
                // Disposed and every pin ended between the check above and here.
                ObjectDisposedException.ThrowIf(true, this);
            }

            if (Interlocked.CompareExchange(ref _references, references + 1, references) == references)
            {
                break;
            }
        }

        return new MemoryHandle(_pointer + elementIndex, default, new PinToken(this));
    }

    /// <summary>Refuses: a pin ends when the <see cref="MemoryHandle"/> that <see cref="Pin"/> returned is disposed.</summary>
    /// <exception cref="InvalidOperationException">Always: this method cannot tell whose pin it would end.</exception>
    public override void Unpin() => throw new InvalidOperationException(
        "A pin of a native Arrow buffer ends when the MemoryHandle that Pin returned is disposed; MemoryManager<T>.Unpin() cannot tell whose pin it would end, so it ends none.");

    protected override void Dispose(bool disposing)
    {
        if (Interlocked.Exchange(ref _disposed, 1) == 0)
        {
            Dereference();
        }
    }

    private static unsafe NativeBlockMemory<T> Create(NativeBuffer<T> buffer, long byteOffset, int length, bool owns)
    {
        MemoryHold hold = buffer.Hold();
        try
        {
            // Every view is checked against its block, so no mistake in the code that chose the range can
            // hand Arrow (or a C consumer of an export) memory outside it.
            long blockBytes;
            using (MemoryLease<T> lease = buffer.Lease())
            {
                blockBytes = lease.Length * sizeof(T);
            }

            if (byteOffset < 0 || length < 0 || byteOffset > blockBytes - length)
            {
                throw new ArgumentOutOfRangeException(nameof(byteOffset), byteOffset, $"Bytes {byteOffset:N0} to {byteOffset + length:N0} are not inside the block of {blockBytes:N0} bytes.");
            }

            return new NativeBlockMemory<T>(buffer, hold, byteOffset, length, owns);
        }
        catch
        {
            hold.Dispose();
            throw;
        }
    }

    private void Dereference()
    {
        if (Interlocked.Decrement(ref _references) != 0)
        {
            return;
        }

        _hold.Dispose();
        if (_owns)
        {
            _buffer.Dispose();
        }
    }

    private void ThrowIfDisposed() => ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);

    /// <summary>One pin: the <see cref="MemoryHandle"/>'s pinnable, which ends its pin the first time only.</summary>
    private sealed class PinToken(NativeBlockMemory<T> memory) : IPinnable
    {
        private NativeBlockMemory<T>? _memory = memory;

        /// <summary>Not used: a token stands for a pin already taken.</summary>
        /// <exception cref="NotSupportedException">Always.</exception>
        public MemoryHandle Pin(int elementIndex) =>
            throw new NotSupportedException("A pin of a native Arrow buffer cannot be pinned again: pin the Memory<byte>.");

        public void Unpin() => Interlocked.Exchange(ref _memory, null)?.Dereference();
    }
}
