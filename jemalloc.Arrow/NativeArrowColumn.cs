using Apache.Arrow;
using Apache.Arrow.C;
using Apache.Arrow.Types;
using jemalloc.AddOns;
using jemalloc.Arrow.Internal;

namespace jemalloc.Arrow;

/// <summary>
/// A native column seen as Apache Arrow arrays without a copy: each chunk's value buffer (and
/// validity buffer) is a range of the native block itself. Made by
/// <see cref="NativeArrowExtensions.ToArrow{T}(NativeBuffer{T}, int)"/>.
/// </summary>
/// <remarks>
/// <para>
/// While this object is not disposed it holds the native structures (<see cref="NativeBuffer{T}.Hold"/>):
/// they cannot be disposed, nor their arena reset, and no <see cref="NativeBuffer{T}.Release"/> can end
/// the hold. <see cref="Dispose"/> lets go; afterwards the Arrow arrays throw
/// <see cref="ObjectDisposedException"/> when their buffers are read, instead of reading memory that
/// may be freed. A chunk exported through the C Data Interface (<see cref="ExportChunk"/>) holds the
/// structures on its own until the consumer calls the exported array's release callback, so a C
/// consumer may keep it after this object is disposed. A column dropped without <see cref="Dispose"/>
/// holds its structures until the garbage collector finds its Arrow arrays unreachable (and no export
/// of them is left): dispose it to let go at a known point.
/// </para>
/// <para>
/// Its arrays may be read from any number of threads. Disposing it while another thread still reads
/// them is a race the library cannot see (Arrow reads the buffers through spans): the read either
/// throws <see cref="ObjectDisposedException"/> or, if it took its span before the dispose, reads the
/// structure's memory, which stays allocated until the structure itself is disposed: dispose the
/// structure only once every reader is done.
/// </para>
/// <para>
/// An Arrow buffer is at most 2 GiB, so a column longer than that is a <see cref="ChunkedArray"/> of
/// several arrays over consecutive ranges of the same block.
/// </para>
/// </remarks>
public sealed partial class NativeArrowColumn : IDisposable
{
    // Where the C Data Interface's ArrowArray keeps its release callback (after five int64 fields and
    // three pointers; the layout is fixed by the specification). Apache.Arrow does not expose the field.
    private const int ReleaseCallbackOffset = 64;

    private readonly List<IDisposable> _memories;
    private readonly nint[] _valueAddresses;
    private int _disposed;

    internal NativeArrowColumn(ChunkedArray chunks, List<IDisposable> memories, nint[] valueAddresses)
    {
        Chunks = chunks;
        _memories = memories;
        _valueAddresses = valueAddresses;
    }

    /// <summary>The column as Arrow arrays, one per chunk.</summary>
    public ChunkedArray Chunks { get; }

    /// <summary>The Arrow data type of the values.</summary>
    public IArrowType DataType => Chunks.DataType;

    /// <summary>The number of rows.</summary>
    public long Length => Chunks.Length;

    /// <summary>How many rows are null.</summary>
    public long NullCount => Chunks.NullCount;

    /// <summary>The number of chunks (arrays).</summary>
    public int ChunkCount => Chunks.ArrayCount;

    /// <summary>The column as one Arrow array.</summary>
    /// <exception cref="InvalidOperationException">The column has more than one chunk: use <see cref="Chunks"/>.</exception>
    public IArrowArray Array
    {
        get
        {
            if (ChunkCount != 1)
            {
                throw new InvalidOperationException($"The column has {ChunkCount} chunks; use Chunks.");
            }

            return Chunks.ArrowArray(0);
        }
    }

    /// <summary>The address of chunk <paramref name="chunk"/>'s first value in native memory (the address its Arrow value buffer starts at).</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="chunk"/> is negative or not less than <see cref="ChunkCount"/>.</exception>
    public nint GetValueAddress(int chunk)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(chunk);
        ArgumentOutOfRangeException.ThrowIfGreaterThanOrEqual(chunk, _valueAddresses.Length);
        return _valueAddresses[chunk];
    }

    /// <summary>
    /// Exports chunk <paramref name="chunk"/> through the Arrow C Data Interface into
    /// <paramref name="destination"/>, without a copy: the exported buffers are the native block.
    /// The export holds the native structures until the consumer calls the array's release callback.
    /// </summary>
    /// <remarks>
    /// Arrow pins each exported buffer until the release callback; pinning one of this column's
    /// buffers holds its native structure, so the block outlives this object's <see cref="Dispose"/>
    /// for as long as the consumer keeps the export. The consumer needs the type too: export it with
    /// <see cref="CArrowSchemaExporter.ExportType(IArrowType, CArrowSchema*)"/> and <see cref="DataType"/>.
    /// </remarks>
    /// <param name="chunk">The chunk to export.</param>
    /// <param name="destination">An <c>ArrowArray</c> structure the consumer allocated (for instance with <see cref="CArrowArray.Create"/>).</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="chunk"/> is negative or not less than <see cref="ChunkCount"/>.</exception>
    /// <exception cref="ArgumentNullException"><paramref name="destination"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="destination"/> holds a live export already (its release callback is set).</exception>
    /// <exception cref="ObjectDisposedException">This column was disposed.</exception>
    public unsafe void ExportChunk(int chunk, CArrowArray* destination)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(chunk);
        ArgumentOutOfRangeException.ThrowIfGreaterThanOrEqual(chunk, _valueAddresses.Length);
        ArgumentNullException.ThrowIfNull(destination);
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
        if (*(nint*)((byte*)destination + ReleaseCallbackOffset) != 0)
        {
            // Overwriting a live export would lose its release callback, and with it the export's hold.
            throw new ArgumentException("The ArrowArray structure holds an export already (its release callback is set): release it, or pass a new structure.", nameof(destination));
        }

        CArrowArrayExporter.ExportArray(Chunks.ArrowArray(chunk), destination);
    }

    /// <summary>Lets go of the native structures; the Arrow arrays throw when read afterwards. Disposing again does nothing.</summary>
    public void Dispose()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        foreach (IDisposable memory in _memories)
        {
            memory.Dispose();
        }
    }

    /// <summary>Builds the chunks over <paramref name="values"/> (and <paramref name="validity"/>), each chunk's buffers holding their structure.</summary>
    internal static unsafe NativeArrowColumn Create<T>(NativeBuffer<T> values, NativeBuffer<byte>? validity, int maxChunkLength)
        where T : unmanaged, IEquatable<T> =>
        Create(values, validity, LengthOf(values), ArrowTypes.Of<T>(), sizeof(T), maxChunkLength);

    /// <summary>
    /// Builds the chunks of a fixed-width column of <paramref name="length"/> rows of <paramref name="type"/>,
    /// <paramref name="elementSize"/> bytes a row, over the block <paramref name="values"/> (whose elements need
    /// not be the rows: a fixed-size binary column is a block of bytes); a column of no rows is one empty chunk.
    /// </summary>
    internal static unsafe NativeArrowColumn Create<T>(NativeBuffer<T> values, NativeBuffer<byte>? validity, long length, IArrowType type, int elementSize, int maxChunkLength)
        where T : unmanaged, IEquatable<T>
    {
        if (validity is not null && LengthOf(validity) < ValidityBitmap.BytesFor(length))
        {
            throw new ArgumentException($"A validity bitmap for {length:N0} rows needs {ValidityBitmap.BytesFor(length):N0} bytes; this one has {LengthOf(validity):N0}.", nameof(validity));
        }

        var memories = new List<IDisposable>();
        var arrays = new List<IArrowArray>();
        var addresses = new List<nint>();
        try
        {
            long start = 0;
            do
            {
                int count = (int)Math.Min(maxChunkLength, length - start);
                var valueMemory = NativeBlockMemory<T>.View(values, start * elementSize, count * elementSize);
                memories.Add(valueMemory);
                addresses.Add(valueMemory.Address);
                ArrowBuffer validityBuffer = ArrowBuffer.Empty;
                int nullCount = 0;
                if (validity is not null)
                {
                    var validityMemory = NativeBlockMemory<byte>.View(validity, start >> 3, (count + 7) >> 3);
                    memories.Add(validityMemory);
                    validityBuffer = new ArrowBuffer(validityMemory.Memory);
                    nullCount = count - (int)ValidityBitmap.CountSet((byte*)validityMemory.Address, count);
                }

                var data = new ArrayData(type, count, nullCount, 0, [validityBuffer, new ArrowBuffer(valueMemory.Memory)]);
                arrays.Add(ArrowArrayFactory.BuildArray(data));
                start += count;
            }
            while (start < length);

            return new NativeArrowColumn(new ChunkedArray(arrays), memories, [.. addresses]);
        }
        catch
        {
            foreach (IDisposable memory in memories)
            {
                memory.Dispose();
            }

            throw;
        }
    }

    private static long LengthOf<T>(NativeBuffer<T> buffer)
        where T : unmanaged, IEquatable<T>
    {
        using MemoryLease<T> lease = buffer.Lease();
        return lease.Length;
    }
}
