using jemalloc.HugePages;
using jemalloc.Interop;

namespace jemalloc.Memory;

/// <summary>
/// The one path by which the library takes memory from jemalloc and gives it back, for the ledger's
/// structures and for <see cref="JemArena"/>'s raw allocations alike: flag checks, huge-page
/// alignment and advice, the fit check for big blocks, and the zeroing policy. Arena budgets and
/// gates are the callers' (they must hold the gate around the call and whatever records the memory).
/// </summary>
internal static unsafe class NativeAllocator
{
    /// <summary>
    /// The <c>mallocx</c> flags for a structure's allocation of <paramref name="size"/> bytes with
    /// <paramref name="options"/>: checked, without <c>MALLOCX_ZERO</c> (zeroing is this class's
    /// job), without an explicit thread cache (a structure may be freed on any thread, and an
    /// explicit cache may be destroyed before it is), with no thread cache at all in an explicit arena
    /// (jemalloc requires every cache that holds an arena's blocks to be flushed before the arena is
    /// reset or destroyed, which the library cannot do for other threads), and aligned to 2 MiB when
    /// huge pages apply.
    /// </summary>
    /// <exception cref="ArgumentException">The flags name a thread cache, arena or alignment that cannot be used.</exception>
    internal static int FlagsFor(nuint size, AllocationOptions options, out bool hugePages)
    {
        int flags = options.Flags.Value;
        if (flags != 0)
        {
            AllocationFlagsValidator.Validate(options.Flags, nameof(options));
            flags &= ~(MallocxFlags.ZeroBit | MallocxFlags.TcacheMask);
            if (options.Flags.ArenaIndex is not null)
            {
                flags |= MallocxFlags.TcacheNoneBits;
            }
        }

        hugePages = HugePagePolicy.Advises(size, options.HugePages);
        return hugePages ? HugePageAdvisor.AlignFlags(flags) : flags;
    }

    /// <summary>
    /// Allocates <paramref name="size"/> bytes with <paramref name="flags"/>, gives huge-page advice
    /// before the first touch, and, when <paramref name="zero"/> is set, leaves the memory reading as zero.
    /// </summary>
    /// <exception cref="OutOfMemoryException">The block cannot fit in the memory the process can get, or jemalloc could not allocate it.</exception>
    internal static void* Allocate(nuint size, int flags, bool hugePages, bool zero) =>
        Allocate(size, flags, hugePages, zero, AllocationKind.Raw, 0);

    /// <summary>
    /// As <see cref="Allocate(nuint, int, bool, bool)"/> for a structure of <paramref name="kind"/> with
    /// element type <paramref name="elementType"/> (<see cref="ElementTypes.IdOf{T}"/>), which an
    /// <see cref="OutOfMemoryException"/> names.
    /// </summary>
    /// <exception cref="OutOfMemoryException">The block cannot fit in the memory the process can get, or jemalloc could not allocate it.</exception>
    internal static void* Allocate(nuint size, int flags, bool hugePages, bool zero, AllocationKind kind, int elementType)
    {
        // Before jemalloc: with overcommit it would hand out a block that cannot fit, and the
        // kernel would kill the process when the block is used.
        SystemMemory.ThrowIfCannotFit(size, kind, elementType);
        void* memory = flags == 0 ? JemNative.Malloc(size) : JemNative.Mallocx(size, flags);
        if (memory == null)
        {
            SystemMemory.ThrowCouldNotAllocate(size, kind, elementType);
        }

        if (hugePages)
        {
            HugePageAdvisor.Advise(memory, size, flags);
        }

        if (zero)
        {
            // Not MALLOCX_ZERO: jemalloc zeroes a reused large block by purging its pages, so that
            // every page faults again on first touch; clearing what may hold old data is cheaper.
            ZeroFill.ClearUnlessKnownZero(memory, size);
        }

        return memory;
    }

    /// <summary>
    /// Resizes a block from <see cref="Allocate(nuint, int, bool, bool, AllocationKind, int)"/> of
    /// <paramref name="oldSize"/> bytes allocated with <paramref name="flags"/>: in place when the pages
    /// after it are free (or the size class does not change), otherwise by a copy into a new block.
    /// With <paramref name="hugePages"/>, a growth to at least one huge page gets a 2 MiB-aligned block
    /// advised for huge pages before the copy touches it (rallocx would copy first), and
    /// <paramref name="flags"/> become the new block's. The bytes past the old size are not cleared.
    /// On failure the block and <paramref name="flags"/> are unchanged.
    /// </summary>
    /// <exception cref="OutOfMemoryException">The new size cannot fit in the memory the process can get, or jemalloc could not allocate it.</exception>
    internal static void* Reallocate(void* memory, nuint oldSize, nuint newSize, ref int flags, bool hugePages, AllocationKind kind, int elementType)
    {
        SystemMemory.ThrowIfCannotFit(newSize, kind, elementType);
        if (newSize > oldSize && HugePagePolicy.Advises(newSize, hugePages))
        {
            return GrowOntoHugePages(memory, oldSize, newSize, ref flags, kind, elementType);
        }

        void* moved = JemNative.Rallocx(memory, newSize, flags);
        if (moved == null)
        {
            SystemMemory.ThrowCouldNotAllocate(newSize, kind, elementType);
        }

        return moved;
    }

    /// <summary>Gives memory from <see cref="Allocate(nuint, int, bool, bool, AllocationKind, int)"/> back to jemalloc, with the flags it was allocated with.</summary>
    internal static void Free(void* memory, nuint size, int flags) => JemNative.Sdallocx(memory, size, flags);

    private static void* GrowOntoHugePages(void* memory, nuint oldSize, nuint newSize, ref int flags, AllocationKind kind, int elementType)
    {
        int alignedFlags = HugePageAdvisor.AlignFlags(flags);
        if (alignedFlags == flags && JemNative.Xallocx(memory, newSize, 0, flags) >= newSize)
        {
            // Grown in place: the new pages are not touched yet, so the advice reaches them.
            HugePageAdvisor.Advise(memory, newSize, flags);
            return memory;
        }

        void* grown = JemNative.Mallocx(newSize, alignedFlags);
        if (grown == null)
        {
            SystemMemory.ThrowCouldNotAllocate(newSize, kind, elementType);
        }

        HugePageAdvisor.Advise(grown, newSize, alignedFlags);
        Buffer.MemoryCopy(memory, grown, newSize, oldSize);
        Free(memory, oldSize, flags);
        flags = alignedFlags;
        return grown;
    }

}
