namespace jemalloc.Benchmarks.Suites.BlockSources;

/// <summary>
/// One allocator as the multi-thread <c>alloc</c> suite drives it: a block of a given size, marked
/// at both ends, then read back and freed (possibly on another thread). Implemented by structs, so
/// each allocator gets its own compiled loop with its calls inlined, as the single-thread suite's
/// one method per allocator does.
/// </summary>
/// <typeparam name="TBlock">What the allocator hands out: an address, an array or a buffer.</typeparam>
internal interface IBlockSource<TBlock>
{
    /// <summary>Allocates a block of <paramref name="size"/> bytes and writes <paramref name="mark"/> to its first and last byte.</summary>
    /// <exception cref="OutOfMemoryException">The allocator returned nothing.</exception>
    static abstract TBlock Allocate(int size, byte mark);

    /// <summary>Frees <paramref name="block"/> (or drops it, for the garbage collector).</summary>
    /// <returns><paramref name="size"/> plus the first and last byte of the block, read before it is freed.</returns>
    static abstract long ReadAndFree(TBlock block, int size);
}
