using System.Collections;
using System.Diagnostics.CodeAnalysis;
using System.Runtime.InteropServices;
using jemalloc.Internal;
using jemalloc.Ledger;
using jemalloc.Memory;

namespace jemalloc;

/// <summary>
/// The one lifecycle of the array-like structures owned by a <see cref="SafeHandle"/>
/// (<see cref="SafeBuffer{T}"/> and <see cref="HugeBuffer{T}"/>): the memory is allocated through the
/// ledger, freed exactly once (by <see cref="SafeHandle.Dispose()"/>, or by the finalizer if the
/// object is leaked and nobody holds it), and a native call that marshals the handle keeps it alive
/// until the call returns.
/// </summary>
/// <typeparam name="T">Any unmanaged struct implementing <see cref="IEquatable{T}"/>.</typeparam>
/// <remarks>
/// Disposing while leased or acquired throws <see cref="InvalidOperationException"/>; disposing again
/// does nothing. Freeing the structure does not free <see cref="FixedBuffer{T}"/>s stored in its elements.
/// </remarks>
public abstract unsafe class NativeBuffer<T> : SafeHandle, IEnumerable<T>, IAllocationOwner
    where T : unmanaged, IEquatable<T>
{
    private protected readonly T* _pointer;
    private protected readonly long _length;
    private readonly LedgerBlock _block;
    // The length the indexers check against: Length while the memory is live, 0 once it is not. A
    // field of this object is cheaper to check on every access than the ledger's state word, which
    // it mirrors: set to 0 on dispose, finalization and arena invalidation.
    private protected long _accessibleLength;

    // Options null: none were given, and HugePagePolicy chooses them from the byte size (the one place
    // the structures' default options are chosen).
    private protected NativeBuffer(long length, AllocationOptions? options, AllocationKind kind)
        : this(length, options, kind, zero: true)
    {
    }

    /// <summary>
    /// Allocates without clearing and writes <paramref name="value"/> to every element before the
    /// constructor returns: one pass over the memory instead of two. The memory is never readable
    /// before it is filled (the object is not yet published, and the fill runs under a lease, so an
    /// arena reset cannot free it meanwhile; if a reset already invalidated it, it stays invalid).
    /// </summary>
    private protected NativeBuffer(long length, AllocationOptions? options, AllocationKind kind, T value)
        : this(length, options, kind, zero: false)
    {
        if (!_block.IsLive)
        {
            return;
        }

        try
        {
            using MemoryLease<T> lease = BeginOperation();
            FillLeased(lease, value);
        }
        catch (ObjectDisposedException) when (!_block.IsLive)
        {
            // An arena reset invalidated it before the lease: nothing can read it, as with a zeroed one.
        }
    }

    /// <summary>
    /// Takes over a live block that the ledger already records (a <see cref="NativeBufferWriter{T}"/>'s,
    /// handed over without a copy): from here on this object is its one owner, frees it as if it had
    /// allocated it, and is told by an arena reset.
    /// </summary>
    private protected NativeBuffer(LedgerBlock adopted, T* pointer, long length, AllocationKind kind)
        : base(IntPtr.Zero, ownsHandle: true)
    {
        _pointer = pointer;
        _length = length;
        _block = adopted;
        SetHandle((nint)_pointer);
        Volatile.Write(ref _accessibleLength, length);
        if (!_block.Adopt(kind, this))
        {
            // An arena reset freed it on the way: nothing can read it, as with one reset after.
            Volatile.Write(ref _accessibleLength, 0);
        }
    }

    /// <summary>Allocates; with <paramref name="zero"/> false the elements hold whatever the memory held (for pools whose contract says so).</summary>
    private protected NativeBuffer(long length, AllocationOptions? options, AllocationKind kind, bool zero)
        : base(IntPtr.Zero, ownsHandle: true)
    {
        if (length <= 0)
        {
            ThrowHelper.ThrowArgumentOutOfRange(nameof(length), length, $"A {TypeName} must have at least one element.");
        }

        nuint bytes = AllocationSize.Of<T>(length);
        AllocationOptions chosen = options ?? HugePagePolicy.DefaultForSize(bytes);
        // Only an arena reset can invalidate the memory without going through this object; the
        // ledger records the owner inside the arena's gate, so no reset can slip in before it.
        IAllocationOwner? owner = chosen.Flags.ArenaIndex is null ? null : this;
        _pointer = (T*)LedgerBlock.Allocate(bytes, chosen, kind, ElementTypes.IdOf<T>(), out _block, owner, zero: zero);
        _length = length;
        SetHandle((nint)_pointer);
        Volatile.Write(ref _accessibleLength, length);
        if (!_block.IsLive)
        {
            // A reset invalidated it between the allocation and the line above.
            Volatile.Write(ref _accessibleLength, 0);
        }
    }

    /// <summary>Whether the memory is still allocated: not disposed, finalized or invalidated by an arena reset.</summary>
    public bool IsValid => _block.IsLive;

    /// <summary>Whether the handle holds no memory; only before construction completes.</summary>
    public override bool IsInvalid => handle == IntPtr.Zero;

    /// <summary>The ledger handle of the memory.</summary>
    public AllocationHandle Handle => _block.Handle;

    /// <summary>How many <see cref="Acquire"/> calls are not yet released, or -1 once disposed.</summary>
    public int AcquireCount => _block.Handle.AcquireCount;

    /// <summary>The raw address of the first element, for native calls. Hold a <see cref="Lease"/> for the duration of the call.</summary>
    /// <exception cref="ObjectDisposedException">The structure was disposed.</exception>
    [SuppressMessage("Naming", "CA1720:Identifier contains type name", Justification = "It is the raw pointer, named as the users of the API expect.")]
    public nint Pointer
    {
        get
        {
            ThrowIfInvalid();
            return (nint)_pointer;
        }
    }

    /// <summary>
    /// Opens a lease: until it is disposed, the structure cannot be disposed or reset, and the lease
    /// hands out spans, element references and the pointer. Use it as <c>using var lease = array.Lease();</c>.
    /// </summary>
    /// <exception cref="ObjectDisposedException">The structure was disposed.</exception>
    public MemoryLease<T> Lease() => BeginLease(withToken: true);

    /// <summary>
    /// Takes a hold that can be kept in a field: until it is disposed, the structure cannot be
    /// disposed or reset, as under a <see cref="Lease"/>. It is counted with the leases, so no
    /// <see cref="Release"/> can end it. Use it for memory that a view or native code keeps past a scope.
    /// </summary>
    /// <returns>The hold, which the caller disposes.</returns>
    /// <exception cref="ObjectDisposedException">The structure was disposed.</exception>
    /// <exception cref="InvalidOperationException">It has the most leases and holds the ledger counts (32,767).</exception>
    public MemoryHold Hold() => _block.Hold(this, TypeName);

    /// <summary>Sets every element to <paramref name="value"/>.</summary>
    /// <exception cref="ObjectDisposedException">The structure was disposed.</exception>
    public void Fill(T value)
    {
        using MemoryLease<T> lease = BeginOperation();
        FillLeased(lease, value);
    }

    /// <summary>
    /// Adds one to the structure's acquire count: until the matching <see cref="Release"/>, disposing
    /// it throws. Prefer <see cref="Lease"/> in a scope and <see cref="Hold"/> beyond one: each is counted
    /// per holder, so another party's extra <see cref="Release"/> cannot end it.
    /// </summary>
    /// <exception cref="ObjectDisposedException">The structure was disposed.</exception>
    /// <exception cref="InvalidOperationException">It is already acquired 32,767 times.</exception>
    public void Acquire() => _block.Acquire(TypeName);

    /// <summary>Takes one from the structure's acquire count (never closes a lease).</summary>
    /// <exception cref="ObjectDisposedException">The structure was disposed.</exception>
    /// <exception cref="InvalidOperationException">It was released more times than acquired.</exception>
    public void Release() => _block.Release(TypeName);

    /// <summary>Throws if the structure was disposed; otherwise does nothing.</summary>
    /// <exception cref="ObjectDisposedException">The structure was disposed.</exception>
    public void ThrowIfInvalid() => _block.ThrowIfFreed(this);

    /// <summary>Enumerates copies of the elements, checking validity at each step.</summary>
    public Enumerator GetEnumerator() => new(this);

    IEnumerator<T> IEnumerable<T>.GetEnumerator() => GetEnumerator();

    IEnumerator IEnumerable.GetEnumerator() => GetEnumerator();

    /// <summary>The address, for callers that hold a lease or checked already.</summary>
    internal T* UnsafePointer => _pointer;

    /// <summary>The ledger block that owns the memory.</summary>
    internal LedgerBlock Block => _block;

    // The one fill of the array-like structures, over a lease the caller holds: the SIMD kernel,
    // with the stores FillPolicy chose for a structure of this size.
    private static void FillLeased(in MemoryLease<T> lease, T value)
    {
        Simd.FillPlan plan = Simd.SimdKernels.FillPlanFor<T>(lease.Length);
        foreach (Span<T> chunk in lease.GetChunks())
        {
            Simd.SimdKernels.Fill(chunk, value, plan);
        }
    }

    /// <summary>The number of elements.</summary>
    internal long ElementCount => _length;

    /// <summary>A lease for one of the library's own operations: no token, closed exactly once by the caller's <see langword="using"/>.</summary>
    internal MemoryLease<T> BeginOperation() => BeginLease(withToken: false);

    /// <summary>
    /// Invalidates the structure at once (every later access throws) and lets <see cref="SafeHandle"/>
    /// free the memory when no native call holds the handle any more.
    /// </summary>
    /// <exception cref="InvalidOperationException">The structure is leased or acquired (only when <paramref name="disposing"/>).</exception>
    protected override void Dispose(bool disposing)
    {
        if (disposing && !IsClosed && _block.Retire(TypeName))
        {
            Volatile.Write(ref _accessibleLength, 0);
        }

        base.Dispose(disposing);
    }

    /// <summary>Frees the memory; called once by <see cref="SafeHandle"/>.</summary>
    protected override bool ReleaseHandle()
    {
        Volatile.Write(ref _accessibleLength, 0);
        _block.FreeOwned();
        return true;
    }

    /// <summary>The ledger invalidated the memory (an arena reset): every later access throws.</summary>
    void IAllocationOwner.OnInvalidated() => Volatile.Write(ref _accessibleLength, 0);

    /// <summary>The failure of an indexer: a bad index on a live structure, or any index on a dead one.</summary>
    [DoesNotReturn]
    private protected void ThrowIndexFailure(long index) => _block.ThrowIndexFailure(index, _length, TypeName);

    /// <summary>The structure's name in messages: "SafeArray", not the runtime's "SafeArray`1" (no allocation).</summary>
    private protected abstract string TypeName { get; }

    /// <summary>Throws unless <c>[start, start + count)</c> is inside the structure; the count is a span's length, so <paramref name="paramName"/> is named either way.</summary>
    private protected void CheckRange(long start, int count, string paramName) =>
        RangeGuard.CheckRange(start, count, _length, paramName, paramName, "array");

    private MemoryLease<T> BeginLease(bool withToken) => _block.OpenLease(this, _pointer, _length, TypeName, withToken);

    /// <summary>
    /// Enumerates a structure's elements. Each step reads its element under a lease, so a
    /// <c>Dispose</c> or arena reset on another thread is refused while the read runs, and a step
    /// after it throws: enumeration never reads freed memory. For speed, loop over a lease's span.
    /// </summary>
    public struct Enumerator : IEnumerator<T>
    {
        private readonly NativeBuffer<T> _buffer;
        private long _index;
        private T _current;

        internal Enumerator(NativeBuffer<T> buffer)
        {
            _buffer = buffer;
            _index = -1;
            _current = default;
        }

        /// <summary>A copy of the current element, read by the last <see cref="MoveNext"/>.</summary>
        public readonly T Current => _current;

        readonly object IEnumerator.Current => Current;

        /// <summary>Moves to the next element and reads it.</summary>
        /// <exception cref="ObjectDisposedException">The structure was disposed or invalidated by an arena reset.</exception>
        public bool MoveNext()
        {
            using MemoryLease<T> lease = _buffer.BeginOperation();
            if (_index + 1 >= lease.Length)
            {
                _index = lease.Length;
                return false;
            }

            _current = lease[++_index];
            return true;
        }

        /// <summary>Goes back to before the first element.</summary>
        public void Reset()
        {
            _index = -1;
            _current = default;
        }

        /// <summary>Does nothing: the enumerator holds no lease between steps.</summary>
        public readonly void Dispose()
        {
        }
    }
}
