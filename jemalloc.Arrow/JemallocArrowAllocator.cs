using System.Buffers;
using Apache.Arrow.Memory;
using jemalloc.Arrow.Internal;

namespace jemalloc.Arrow;

/// <summary>
/// An Apache Arrow <see cref="MemoryAllocator"/> that allocates through jemalloc.NET: each Arrow
/// buffer is a <see cref="SafeArray{T}"/> of bytes, so it is recorded by the ledger, honours the
/// options' arena (and its budget) and huge pages, and is freed when Arrow disposes it. Pass it to
/// Arrow's readers and builders (for instance <c>new ArrowFileReader(stream, allocator)</c>).
/// </summary>
public sealed class JemallocArrowAllocator : MemoryAllocator
{
    private const int LgAlignMask = 0x3F;
    private readonly AllocationOptions _options;

    /// <summary>An allocator with the library's default options.</summary>
    public JemallocArrowAllocator()
        : this(AllocationOptions.Default)
    {
    }

    /// <summary>An allocator whose buffers are allocated with <paramref name="options"/> (for instance a <see cref="JemArena"/>'s), aligned to at least Arrow's 64 bytes.</summary>
    /// <param name="options">The allocation options.</param>
    public JemallocArrowAllocator(AllocationOptions options)
        : base(DefaultAlignment)
    {
        // Arrow asks for 64-byte alignment; a stronger one the options name already is kept.
        int lgAlign = options.Flags.Value & LgAlignMask;
        int wanted = System.Numerics.BitOperations.Log2((uint)DefaultAlignment);
        _options = lgAlign >= wanted ? options : options with { Flags = MallocxFlags.FromValue((options.Flags.Value & ~LgAlignMask) | wanted) };
    }

    /// <summary>
    /// Allocates a zero-filled native block of <paramref name="length"/> bytes. Until Arrow disposes it
    /// (and every pin of it has ended) the block is held: a reset of the options' arena is refused
    /// meanwhile, rather than free memory an Arrow array still reads.
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="length"/> is negative.</exception>
    /// <exception cref="OutOfMemoryException">jemalloc could not allocate the memory.</exception>
    /// <exception cref="ArenaBudgetExceededException">The options' arena would exceed its budget.</exception>
    /// <exception cref="ObjectDisposedException">The options name a disposed <see cref="JemArena"/>, or its reset freed the block as it was made.</exception>
    protected override IMemoryOwner<byte> AllocateInternal(int length, out int bytesAllocated)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(length);
        // A block of at least one byte: a structure has at least one element.
        var block = new SafeArray<byte>(Math.Max(length, 1), _options);
        try
        {
            IMemoryOwner<byte> memory = NativeBlockMemory<byte>.Owning(block, length);
            bytesAllocated = length;
            return memory;
        }
        catch
        {
            block.Dispose();
            throw;
        }
    }
}
