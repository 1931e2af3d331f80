using System.Numerics;
using System.Runtime.CompilerServices;
using jemalloc.Internal;
using jemalloc.Interop;
using jemalloc.Memory;

namespace jemalloc;

// The allocation functions. Failure reporting follows System.Runtime.InteropServices.NativeMemory:
// an allocation that cannot be satisfied throws OutOfMemoryException instead of returning null,
// so a null pointer never reaches user code. Every *allocx function's flags pass the structures'
// check (CheckFlags) first: jemalloc trusts them, and crashes on a thread cache it never created.
public static unsafe partial class Jem
{
    /// <summary>ENOMEM, as posix_memalign returns it.</summary>
    private const int ENOMEM = 12;

    /// <summary>Allocates <paramref name="size"/> bytes, not initialized (<c>je_malloc</c>).</summary>
    /// <param name="size">The number of bytes; 0 gives a unique minimal allocation, as jemalloc does.</param>
    /// <returns>The memory; free it with <see cref="Free"/>.</returns>
    /// <exception cref="OutOfMemoryException">jemalloc could not allocate <paramref name="size"/> bytes.</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static void* Malloc(nuint size)
    {
        void* memory = JemNative.Malloc(size);
        if (memory == null)
        {
            ThrowHelper.ThrowOutOfMemory(size);
        }

        return memory;
    }

    /// <summary>Allocates zero-filled memory for <paramref name="count"/> elements of <paramref name="size"/> bytes (<c>je_calloc</c>).</summary>
    /// <returns>The memory; free it with <see cref="Free"/>.</returns>
    /// <exception cref="OutOfMemoryException">jemalloc could not allocate the memory, or <paramref name="count"/> × <paramref name="size"/> overflows.</exception>
    public static void* Calloc(nuint count, nuint size)
    {
        void* memory = JemNative.Calloc(count, size);
        if (memory == null)
        {
            UInt128 bytes = (UInt128)(ulong)count * (ulong)size;
            ThrowHelper.ThrowOutOfMemory(bytes > ulong.MaxValue ? ulong.MaxValue : (ulong)bytes);
        }

        return memory;
    }

    /// <summary>
    /// Resizes an allocation, moving it if needed (<c>je_realloc</c>). The first
    /// <c>min(old size, <paramref name="size"/>)</c> bytes are kept.
    /// </summary>
    /// <param name="memory">Memory from jemalloc, or null to allocate new memory.</param>
    /// <param name="size">The new size. 0 is treated as 1 (as <c>NativeMemory.Realloc</c> does) so the result is never null.</param>
    /// <returns>The memory at its new address; <paramref name="memory"/> must no longer be used unless it is returned.</returns>
    /// <exception cref="OutOfMemoryException">jemalloc could not allocate the memory; <paramref name="memory"/> is unchanged and still owned by the caller.</exception>
    public static void* Realloc(void* memory, nuint size)
    {
        // jemalloc 5.3 frees the memory and returns null for size 0 (opt.zero_realloc:free).
        void* result = JemNative.Realloc(memory, size == 0 ? 1 : size);
        if (result == null)
        {
            ThrowHelper.ThrowOutOfMemory(size);
        }

        return result;
    }

    /// <summary>Frees memory from any jemalloc allocation function (<c>je_free</c>); null is ignored.</summary>
    /// <param name="memory">Memory from jemalloc (never from another allocator), or null.</param>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static void Free(void* memory) => JemNative.Free(memory);

    /// <summary>Allocates <paramref name="size"/> bytes aligned to <paramref name="alignment"/> (<c>je_aligned_alloc</c>).</summary>
    /// <param name="alignment">A power of two.</param>
    /// <param name="size">The number of bytes (need not be a multiple of the alignment).</param>
    /// <returns>The memory; free it with <see cref="Free"/>.</returns>
    /// <exception cref="ArgumentException"><paramref name="alignment"/> is not a power of two.</exception>
    /// <exception cref="OutOfMemoryException">jemalloc could not allocate the memory.</exception>
    public static void* AlignedAlloc(nuint alignment, nuint size)
    {
        if (!BitOperations.IsPow2(alignment))
        {
            ThrowHelper.ThrowArgument(nameof(alignment), $"The alignment must be a power of two; {alignment} is not.");
        }

        void* memory = JemNative.AlignedAlloc(alignment, size);
        if (memory == null)
        {
            ThrowHelper.ThrowOutOfMemory(size);
        }

        return memory;
    }

    /// <summary>Allocates <paramref name="size"/> bytes aligned to <paramref name="alignment"/> (<c>je_posix_memalign</c>).</summary>
    /// <param name="alignment">A power of two, at least the size of a pointer (8).</param>
    /// <param name="size">The number of bytes.</param>
    /// <returns>The memory; free it with <see cref="Free"/>.</returns>
    /// <exception cref="ArgumentException"><paramref name="alignment"/> is not a power of two or is smaller than a pointer.</exception>
    /// <exception cref="OutOfMemoryException">jemalloc could not allocate the memory.</exception>
    public static void* PosixMemalign(nuint alignment, nuint size)
    {
        if (!BitOperations.IsPow2(alignment) || alignment < (nuint)sizeof(void*))
        {
            ThrowHelper.ThrowArgument(nameof(alignment), $"The alignment must be a power of two and at least {sizeof(void*)}; {alignment} is not.");
        }

        void* memory = null;
        int error = JemNative.PosixMemalign(&memory, alignment, size);
        if (error != 0 || memory == null)
        {
            if (error != 0 && error != ENOMEM)
            {
                ThrowHelper.ThrowArgument(nameof(alignment), $"posix_memalign rejected alignment {alignment} (error {error}).");
            }

            ThrowHelper.ThrowOutOfMemory(size);
        }

        return memory;
    }

    /// <summary>Allocates <paramref name="size"/> bytes with alignment, zeroing, arena and thread-cache choices (<c>je_mallocx</c>).</summary>
    /// <param name="size">The number of bytes; must not be 0 (undefined in jemalloc).</param>
    /// <param name="flags">What to do: <see cref="MallocxFlags.Zero"/>, <see cref="MallocxFlags.Align"/>, <see cref="MallocxFlags.Arena"/>, ...</param>
    /// <returns>The memory; free it with <see cref="Free"/>, <see cref="Dallocx(void*, MallocxFlags)"/> or <see cref="Sdallocx(void*, nuint, MallocxFlags)"/>.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="size"/> is 0.</exception>
    /// <exception cref="ArgumentException"><paramref name="flags"/> name a thread cache or arena that cannot be used (one not created through <c>tcache.create</c> or destroyed, one of a <see cref="JemArena"/>, an arena index that names no arena), or an alignment no block can have; nothing was allocated.</exception>
    /// <exception cref="OutOfMemoryException">jemalloc could not allocate the memory (or the arena or alignment asked for cannot serve it).</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static void* Mallocx(nuint size, MallocxFlags flags = default)
    {
        if (size == 0)
        {
            ThrowZeroSize(nameof(size));
        }

        CheckFlags(flags);

        void* memory = JemNative.Mallocx(size, flags.Value);
        if (memory == null)
        {
            ThrowHelper.ThrowOutOfMemory(size);
        }

        return memory;
    }

    /// <summary>Allocates with raw <c>MALLOCX_*</c> flag bits (<c>je_mallocx</c>); see <see cref="Mallocx(nuint, MallocxFlags)"/>.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="size"/> is 0.</exception>
    /// <exception cref="ArgumentException"><paramref name="flags"/> name a thread cache or arena that cannot be used.</exception>
    /// <exception cref="OutOfMemoryException">jemalloc could not allocate the memory.</exception>
    public static void* Mallocx(nuint size, int flags) => Mallocx(size, MallocxFlags.FromValue(flags));

    /// <summary>Resizes an allocation, moving it if needed (<c>je_rallocx</c>).</summary>
    /// <param name="memory">Memory from jemalloc; not null.</param>
    /// <param name="size">The new size; must not be 0 (undefined in jemalloc).</param>
    /// <param name="flags">Alignment, zeroing of the grown part, arena and thread cache, as for <see cref="Mallocx(nuint, MallocxFlags)"/>.</param>
    /// <returns>The memory at its new address; <paramref name="memory"/> must no longer be used unless it is returned.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="memory"/> is null.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="size"/> is 0.</exception>
    /// <exception cref="ArgumentException"><paramref name="flags"/> name a thread cache or arena that cannot be used; <paramref name="memory"/> is unchanged.</exception>
    /// <exception cref="OutOfMemoryException">jemalloc could not allocate the memory; <paramref name="memory"/> is unchanged and still owned by the caller.</exception>
    public static void* Rallocx(void* memory, nuint size, MallocxFlags flags = default)
    {
        ArgumentNullException.ThrowIfNull(memory);
        if (size == 0)
        {
            ThrowZeroSize(nameof(size));
        }

        CheckFlags(flags);

        void* result = JemNative.Rallocx(memory, size, flags.Value);
        if (result == null)
        {
            ThrowHelper.ThrowOutOfMemory(size);
        }

        return result;
    }

    /// <summary>Resizes an allocation with raw flag bits (<c>je_rallocx</c>); see <see cref="Rallocx(void*, nuint, MallocxFlags)"/>.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="memory"/> is null.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="size"/> is 0.</exception>
    /// <exception cref="ArgumentException"><paramref name="flags"/> name a thread cache or arena that cannot be used.</exception>
    /// <exception cref="OutOfMemoryException">jemalloc could not allocate the memory.</exception>
    public static void* Rallocx(void* memory, nuint size, int flags) => Rallocx(memory, size, MallocxFlags.FromValue(flags));

    /// <summary>
    /// Resizes an allocation in place, never moving it (<c>je_xallocx</c>): tries to make it at least
    /// <paramref name="size"/> and up to <paramref name="size"/> + <paramref name="extra"/> bytes.
    /// </summary>
    /// <param name="memory">Memory from jemalloc; not null.</param>
    /// <param name="size">The size wanted; must not be 0 (undefined in jemalloc).</param>
    /// <param name="extra">Extra bytes welcome if available in place.</param>
    /// <param name="flags">Alignment and zeroing, as for <see cref="Mallocx(nuint, MallocxFlags)"/>.</param>
    /// <returns>The allocation's real size afterwards; less than <paramref name="size"/> when it could not grow in place (it is then unchanged).</returns>
    /// <exception cref="ArgumentNullException"><paramref name="memory"/> is null.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="size"/> is 0.</exception>
    /// <exception cref="ArgumentException"><paramref name="flags"/> name a thread cache or arena that cannot be used; <paramref name="memory"/> is unchanged.</exception>
    public static nuint Xallocx(void* memory, nuint size, nuint extra, MallocxFlags flags = default)
    {
        ArgumentNullException.ThrowIfNull(memory);
        if (size == 0)
        {
            ThrowZeroSize(nameof(size));
        }

        CheckFlags(flags);

        nuint reported = JemNative.Xallocx(memory, size, extra, flags.Value);
        // jemalloc 5.3.0 grows the block to `size` when `size + extra` does not fit in place, yet reports
        // failure and the old size (src/large.c, large_ralloc_no_move: its second expand lacks a '!').
        // Without an extra there is no second try, so the answer is right.
        return extra == 0 ? reported : JemNative.Sallocx(memory, 0);
    }

    /// <summary>Resizes in place with raw flag bits (<c>je_xallocx</c>); see <see cref="Xallocx(void*, nuint, nuint, MallocxFlags)"/>.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="memory"/> is null.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="size"/> is 0.</exception>
    /// <exception cref="ArgumentException"><paramref name="flags"/> name a thread cache or arena that cannot be used.</exception>
    public static nuint Xallocx(void* memory, nuint size, nuint extra, int flags) => Xallocx(memory, size, extra, MallocxFlags.FromValue(flags));

    /// <summary>Returns the real (usable) size of an allocation (<c>je_sallocx</c>).</summary>
    /// <param name="memory">Memory from jemalloc; not null.</param>
    /// <param name="flags">Ignored by jemalloc 5.3 apart from validation; pass the flags the memory was allocated with.</param>
    /// <exception cref="ArgumentNullException"><paramref name="memory"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="flags"/> name a thread cache or arena that cannot be used.</exception>
    public static nuint Sallocx(void* memory, MallocxFlags flags = default)
    {
        ArgumentNullException.ThrowIfNull(memory);
        CheckFlags(flags);
        return JemNative.Sallocx(memory, flags.Value);
    }

    /// <summary>Returns the real size of an allocation with raw flag bits (<c>je_sallocx</c>).</summary>
    /// <exception cref="ArgumentNullException"><paramref name="memory"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="flags"/> name a thread cache or arena that cannot be used.</exception>
    public static nuint Sallocx(void* memory, int flags) => Sallocx(memory, MallocxFlags.FromValue(flags));

    /// <summary>Frees memory, choosing the thread cache or arena path with <paramref name="flags"/> (<c>je_dallocx</c>).</summary>
    /// <param name="memory">Memory from jemalloc; not null.</param>
    /// <param name="flags">The thread-cache choice (e.g. <see cref="MallocxFlags.NoThreadCache"/>); jemalloc ignores the other parts, which are checked all the same.</param>
    /// <exception cref="ArgumentNullException"><paramref name="memory"/> is null (jemalloc does not accept it here, unlike <see cref="Free"/>).</exception>
    /// <exception cref="ArgumentException"><paramref name="flags"/> name a thread cache or arena that cannot be used; nothing was freed.</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static void Dallocx(void* memory, MallocxFlags flags = default)
    {
        ArgumentNullException.ThrowIfNull(memory);
        CheckFlags(flags);
        JemNative.Dallocx(memory, flags.Value);
    }

    /// <summary>Frees memory with raw flag bits (<c>je_dallocx</c>); see <see cref="Dallocx(void*, MallocxFlags)"/>.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="memory"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="flags"/> name a thread cache or arena that cannot be used; nothing was freed.</exception>
    public static void Dallocx(void* memory, int flags) => Dallocx(memory, MallocxFlags.FromValue(flags));

    /// <summary>
    /// Frees memory of a known size (<c>je_sdallocx</c>), which saves jemalloc a metadata lookup.
    /// The size is checked first: jemalloc itself would corrupt its metadata on a wrong one.
    /// </summary>
    /// <param name="memory">Memory from jemalloc; not null.</param>
    /// <param name="size">The size asked for when allocating, or any size up to <see cref="Sallocx(void*, MallocxFlags)"/> of it.</param>
    /// <param name="flags">The flags used when allocating (alignment matters).</param>
    /// <exception cref="ArgumentNullException"><paramref name="memory"/> is null.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="size"/> is 0, as for the other <c>*allocx</c> functions; nothing is freed.</exception>
    /// <exception cref="ArgumentException">
    /// <paramref name="size"/> does not belong to the allocation's size class, or <paramref name="flags"/> name a thread
    /// cache or arena that cannot be used; nothing is freed.
    /// </exception>
    public static void Sdallocx(void* memory, nuint size, MallocxFlags flags = default)
    {
        ArgumentNullException.ThrowIfNull(memory);
        if (size == 0)
        {
            ThrowZeroSize(nameof(size));
        }

        CheckFlags(flags);
        nuint actual = JemNative.Sallocx(memory, 0);
        if (JemNative.Nallocx(size, flags.Value) != actual)
        {
            ThrowHelper.ThrowArgument(nameof(size), $"{size} bytes is not the size of this allocation (its real size is {actual}); nothing was freed.");
        }

        JemNative.Sdallocx(memory, size, flags.Value);
    }

    /// <summary>Frees memory of a known size with raw flag bits (<c>je_sdallocx</c>); see <see cref="Sdallocx(void*, nuint, MallocxFlags)"/>.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="memory"/> is null.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="size"/> is 0.</exception>
    /// <exception cref="ArgumentException"><paramref name="size"/> does not belong to the allocation's size class, or <paramref name="flags"/> name a thread cache or arena that cannot be used.</exception>
    public static void Sdallocx(void* memory, nuint size, int flags) => Sdallocx(memory, size, MallocxFlags.FromValue(flags));

    /// <summary>Returns the real size <see cref="Mallocx(nuint, MallocxFlags)"/> would give for <paramref name="size"/>, without allocating (<c>je_nallocx</c>).</summary>
    /// <returns>The size, or 0 when the request is larger than jemalloc can ever serve.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="size"/> is 0.</exception>
    /// <exception cref="ArgumentException"><paramref name="flags"/> name a thread cache or arena that cannot be used.</exception>
    public static nuint Nallocx(nuint size, MallocxFlags flags = default)
    {
        if (size == 0)
        {
            ThrowZeroSize(nameof(size));
        }

        CheckFlags(flags);

        return JemNative.Nallocx(size, flags.Value);
    }

    /// <summary>Returns the real size for <paramref name="size"/> with raw flag bits (<c>je_nallocx</c>).</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="size"/> is 0.</exception>
    /// <exception cref="ArgumentException"><paramref name="flags"/> name a thread cache or arena that cannot be used.</exception>
    public static nuint Nallocx(nuint size, int flags) => Nallocx(size, MallocxFlags.FromValue(flags));

    /// <summary>Returns the usable size of an allocation (<c>je_malloc_usable_size</c>); 0 for null.</summary>
    /// <param name="memory">Memory from jemalloc, or null.</param>
    public static nuint MallocUsableSize(void* memory) => JemNative.MallocUsableSize(memory);

    /// <summary>
    /// The structures' check of <see cref="MallocxFlags"/>, for every <c>*allocx</c> function: an explicit thread
    /// cache not created through <c>tcache.create</c> (<see cref="MallctlKeys.Tcache"/>) or destroyed, or one of a
    /// <see cref="JemArena"/>; an arena index that names no arena (jemalloc would create it silently, or read past
    /// its arena table); an alignment larger than any block. Flags of 0 cost one comparison.
    /// </summary>
    /// <exception cref="ArgumentException">The flags cannot be used; the message names their value and why.</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void CheckFlags(MallocxFlags flags)
    {
        if (flags.Value != 0)
        {
            AllocationFlagsValidator.Validate(flags, nameof(flags));
        }
    }

    private static void ThrowZeroSize(string paramName) =>
        ThrowHelper.ThrowArgumentOutOfRange(paramName, (nuint)0, "The size must not be 0: jemalloc's *allocx functions leave it undefined.");
}
