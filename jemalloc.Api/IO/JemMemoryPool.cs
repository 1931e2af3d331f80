using System.Buffers;
using jemalloc.Internal;

namespace jemalloc;

/// <summary>
/// A <see cref="MemoryPool{T}"/> of native blocks: every <see cref="Rent(int)"/> allocates a checked
/// <see cref="SafeArray{T}"/> of bytes through the library's one allocation path (in a
/// <see cref="JemArena"/> if one is given), and the owner's <see cref="IDisposable.Dispose"/> frees it.
/// Blocks are not cached by the pool: jemalloc's thread caches and size classes already are the pool.
/// Thread-safe: any thread may rent, and any thread may return any block.
/// </summary>
/// <remarks>
/// <para>
/// The owner's <see cref="IMemoryOwner{T}.Memory"/> throws <see cref="ObjectDisposedException"/> once the
/// owner is disposed; so does every <see cref="Memory{T}.Span"/> and <see cref="Memory{T}.Pin"/> of a
/// <see cref="Memory{T}"/> taken from it before (the memory is a <see cref="MemoryManager{T}"/> that
/// checks on every call). A <see cref="Span{T}"/> already taken cannot be checked: as with every
/// <see cref="IMemoryOwner{T}"/>, disposing the owner is the promise that no span of it is still in use.
/// A pin (<see cref="Memory{T}.Pin"/>, as <c>System.IO.Pipelines</c> and sockets take) holds the memory:
/// an owner disposed while pinned is returned at once, but its memory is freed by the last unpin.
/// </para>
/// <para>
/// Disposing the pool refuses later rents; blocks rented before stay usable until their owners are disposed.
/// An owner dropped without being disposed goes back to the pool's budget and books when the garbage
/// collector finalizes it.
/// </para>
/// <para>
/// It cannot be Kestrel's pool (ASP.NET Core 10): Kestrel takes its pools from the
/// <c>IMemoryPoolFactory&lt;byte&gt;</c> in dependency injection, but its socket transport sends a
/// response of several blocks through <c>SocketAsyncEventArgs.BufferList</c>, which takes only managed
/// arrays, and resets the connection for native blocks.
/// </para>
/// </remarks>
/// <example>
/// <code>
/// using var pool = new JemMemoryPool(budgetBytes: 64 &lt;&lt; 20);
/// var pipe = new Pipe(new PipeOptions(pool: pool));
/// </code>
/// </example>
public sealed class JemMemoryPool : MemoryPool<byte>
{
    /// <summary>The size of the block <c>Rent()</c> (or <c>Rent(-1)</c>) gives, as <see cref="MemoryPool{T}.Shared"/> does.</summary>
    public const int DefaultBufferSize = 4096;

    private readonly int _maxBufferSize;
    private readonly long _budgetBytes;
    private readonly AllocationOptions? _arenaOptions;
    private long _rentCount;
    private long _returnCount;
    private long _rentedBytes;
    private long _returnedBytes;
    private long _outstandingBytes;
    private int _disposed;

    /// <summary>Creates a pool of native blocks.</summary>
    /// <param name="maxBufferSize">The largest block <see cref="Rent(int)"/> gives, in bytes.</param>
    /// <param name="arena">The arena to allocate in (counted against its budget, invalidated by its reset), or null for jemalloc's automatic arenas.</param>
    /// <param name="budgetBytes">The most bytes the pool's owners may hold at once (rented and not returned), or null for no limit.</param>
    /// <param name="clearBlocks">
    /// Whether a rented block reads as zero. By default it holds whatever the memory held, as a block of
    /// <see cref="MemoryPool{T}.Shared"/> does: pipes and sockets write before they read, and clearing
    /// every block would cost a pass over all the bytes that flow through the pool.
    /// </param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxBufferSize"/> or <paramref name="budgetBytes"/> is zero or negative.</exception>
    /// <exception cref="ObjectDisposedException"><paramref name="arena"/> has been destroyed.</exception>
    public JemMemoryPool(int maxBufferSize = int.MaxValue, JemArena? arena = null, long? budgetBytes = null, bool clearBlocks = false)
    {
        if (maxBufferSize <= 0)
        {
            ThrowHelper.ThrowArgumentOutOfRange(nameof(maxBufferSize), maxBufferSize, "The largest block must be at least one byte.");
        }

        if (budgetBytes is <= 0)
        {
            ThrowHelper.ThrowArgumentOutOfRange(nameof(budgetBytes), budgetBytes, "A budget must be at least one byte; pass null for no limit.");
        }

        _maxBufferSize = maxBufferSize;
        _budgetBytes = budgetBytes ?? long.MaxValue;
        _arenaOptions = arena?.Options;
        Arena = arena;
        ClearsBlocks = clearBlocks;
    }

    /// <summary>The largest block <see cref="Rent(int)"/> gives, in bytes.</summary>
    public override int MaxBufferSize => _maxBufferSize;

    /// <summary>The arena the blocks are allocated in, or null for jemalloc's automatic arenas.</summary>
    public JemArena? Arena { get; }

    /// <summary>The most bytes the pool's owners may hold at once, or null for no limit.</summary>
    public long? BudgetBytes => _budgetBytes == long.MaxValue ? null : _budgetBytes;

    /// <summary>Whether a rented block reads as zero (otherwise it holds whatever the memory held).</summary>
    public bool ClearsBlocks { get; }

    /// <summary>Whether the pool was disposed (it then refuses rents).</summary>
    public bool IsDisposed => Volatile.Read(ref _disposed) != 0;

    /// <summary>
    /// Rents a native block (zero-filled if <see cref="ClearsBlocks"/>) of at least <paramref name="minBufferSize"/> bytes (exactly that
    /// many, or <see cref="DefaultBufferSize"/> for -1; a request of 0 gives one byte). Dispose the owner
    /// to return it.
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="minBufferSize"/> is below -1 or above <see cref="MaxBufferSize"/>.</exception>
    /// <exception cref="ObjectDisposedException">The pool was disposed, or its arena destroyed.</exception>
    /// <exception cref="MemoryPoolBudgetExceededException">The block would take the pool's outstanding bytes past its budget.</exception>
    /// <exception cref="ArenaBudgetExceededException">The block would exceed the arena's budget.</exception>
    /// <exception cref="OutOfMemoryException">jemalloc could not allocate the block.</exception>
    public override IMemoryOwner<byte> Rent(int minBufferSize = -1)
    {
        ObjectDisposedException.ThrowIf(IsDisposed, this);
        if (minBufferSize < -1 || minBufferSize > _maxBufferSize)
        {
            ThrowHelper.ThrowArgumentOutOfRange(nameof(minBufferSize), minBufferSize, $"A block must be -1 (the default size) or 0 to {_maxBufferSize:N0} bytes.");
        }

        int size = minBufferSize == -1 ? Math.Min(DefaultBufferSize, _maxBufferSize) : Math.Max(minBufferSize, 1);
        Reserve(size);
        SafeArray<byte> array;
        try
        {
            array = new SafeArray<byte>(size, _arenaOptions ?? HugePagePolicy.DefaultFor<byte>(size), zero: ClearsBlocks);
        }
        catch
        {
            Interlocked.Add(ref _outstandingBytes, -size);
            throw;
        }

        Interlocked.Increment(ref _rentCount);
        Interlocked.Add(ref _rentedBytes, size);
        return new PooledBlock(this, array);
    }

    /// <summary>A snapshot of the pool's books: blocks and bytes rented, returned and outstanding.</summary>
    public JemMemoryPoolStatistics GetStatistics()
    {
        // Returns first: a rent and its return racing with this read never show as negative outstanding.
        long returnCount = Volatile.Read(ref _returnCount);
        long returnedBytes = Volatile.Read(ref _returnedBytes);
        return new JemMemoryPoolStatistics(Volatile.Read(ref _rentCount), returnCount, Volatile.Read(ref _rentedBytes), returnedBytes);
    }

    /// <summary>The owner of a block was disposed: its bytes leave the budget, even if a pin defers the free.</summary>
    internal void OnReturned(int size)
    {
        Interlocked.Add(ref _outstandingBytes, -size);
        Interlocked.Add(ref _returnedBytes, size);
        Interlocked.Increment(ref _returnCount);
    }

    /// <summary>Refuses later rents; blocks already rented stay usable until returned.</summary>
    protected override void Dispose(bool disposing) => Volatile.Write(ref _disposed, 1);

    private void Reserve(int size)
    {
        while (true)
        {
            long outstanding = Volatile.Read(ref _outstandingBytes);
            if (size > _budgetBytes - outstanding)
            {
                throw new MemoryPoolBudgetExceededException(_budgetBytes, outstanding, size);
            }

            if (Interlocked.CompareExchange(ref _outstandingBytes, outstanding + size, outstanding) == outstanding)
            {
                return;
            }
        }
    }
}
