namespace jemalloc.Benchmarks.Infrastructure;

/// <summary>
/// The parts of the small-object suites (<c>alloc</c>, <c>arena</c>) that do not depend on the allocator
/// measured: drawing the sizes, marking each block and adding up what was written. Each allocator's loop
/// stays in its own benchmark method, so its allocation call is inlined into the measured code.
/// </summary>
internal static unsafe class SmallObjectWorkload
{
    /// <summary>
    /// Draws <paramref name="count"/> sizes from <paramref name="choices"/> with a fixed <paramref name="seed"/>
    /// (the same sequence in every process) and the result an operation over them must return.
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="count"/> is negative.</exception>
    public static int[] DrawSizes(IReadOnlyList<int> choices, int count, int seed, out long expected)
    {
        var random = new Random(seed);
        var sizes = new int[count];
        expected = 0;
        for (int i = 0; i < count; i++)
        {
            sizes[i] = choices[random.Next(choices.Count)];
            expected += sizes[i] + (byte)i;
        }

        return sizes;
    }

    /// <summary>Writes the low byte of <paramref name="index"/> to the first and last byte of a block.</summary>
    /// <returns>The block's address.</returns>
    /// <exception cref="OutOfMemoryException"><paramref name="memory"/> is null: the allocation failed.</exception>
    public static nint Touch(byte* memory, int size, int index)
    {
        if (memory == null)
        {
            NativeMemoryError.Throw("allocator", (nuint)size);
        }

        memory[0] = (byte)index;
        memory[size - 1] = (byte)index;
        return (nint)memory;
    }

    /// <summary>A block's size plus its first and last byte (what <see cref="Touch"/> wrote there).</summary>
    public static long ReadEnds(byte* memory, int size) => size + memory[0] + memory[size - 1];

    /// <summary>The sum of each block's size and last byte.</summary>
    public static long Sum(nint[] pointers, int[] sizes)
    {
        long total = 0;
        for (int i = 0; i < pointers.Length; i++)
        {
            total += sizes[i] + ((byte*)pointers[i])[sizes[i] - 1];
        }

        return total;
    }

    /// <summary>
    /// The managed baseline: allocates and marks a <c>new byte[]</c> of each size, keeps them all in
    /// <paramref name="arrays"/>, adds up their sizes and last bytes, then drops them for the garbage collector.
    /// </summary>
    public static long AllocateAndDropManagedArrays(int[] sizes, byte[]?[] arrays)
    {
        for (int i = 0; i < sizes.Length; i++)
        {
            byte[] array = new byte[sizes[i]];
            array[0] = (byte)i;
            array[^1] = (byte)i;
            arrays[i] = array;
        }

        long total = 0;
        for (int i = 0; i < arrays.Length; i++)
        {
            total += arrays[i]!.Length + arrays[i]![^1];
        }

        Array.Clear(arrays);
        return total;
    }
}
