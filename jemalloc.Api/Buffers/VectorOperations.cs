using System.Numerics;
using jemalloc.Simd;

namespace jemalloc;

/// <summary>
/// SIMD operations over the numeric elements of <see cref="FixedBuffer{T}"/>, <see cref="SafeArray{T}"/>
/// and <see cref="HugeArray{T}"/> (any <see cref="NativeBuffer{T}"/>), using the widest vectors the CPU
/// offers; every length is handled (the tail too). Integer results equal a scalar loop's, with the
/// same wrap-around on overflow; floating-point sums may differ from a scalar loop's by rounding,
/// because the order of additions differs.
/// </summary>
/// <remarks>
/// Each operation holds the structure leased while it runs, so a free, dispose or arena reset from
/// another thread meanwhile throws <see cref="InvalidOperationException"/> there instead of freeing
/// memory in use. The <c>Parallel</c> forms on <see cref="HugeBuffer{T}"/> split the array into
/// partitions run on the thread pool, each with the same SIMD kernel.
/// </remarks>
public static class VectorOperations
{
    // Below this many elements a parallel operation runs on the calling thread: splitting costs more than it saves.
    private const long ParallelThreshold = 1 << 18;
    // Partition boundaries are multiples of this many elements, keeping threads off each other's cache lines.
    private const int PartitionAlignment = 1024;

    /// <summary>Sets every element to <paramref name="value"/>.</summary>
    /// <exception cref="ObjectDisposedException">The buffer was freed, or is <see langword="default"/>.</exception>
    public static void VectorFill<T>(this FixedBuffer<T> buffer, T value)
        where T : unmanaged, INumber<T>
    {
        using MemoryLease<T> lease = buffer.BeginOperation();
        Fill(lease, value);
    }

    /// <summary>Multiplies every element by <paramref name="factor"/> in place.</summary>
    /// <exception cref="ObjectDisposedException">The buffer was freed, or is <see langword="default"/>.</exception>
    public static void VectorMultiply<T>(this FixedBuffer<T> buffer, T factor)
        where T : unmanaged, INumber<T>
    {
        using MemoryLease<T> lease = buffer.BeginOperation();
        Multiply(lease, factor);
    }

    /// <summary>Adds <paramref name="addend"/> to every element in place.</summary>
    /// <exception cref="ObjectDisposedException">The buffer was freed, or is <see langword="default"/>.</exception>
    public static void VectorAdd<T>(this FixedBuffer<T> buffer, T addend)
        where T : unmanaged, INumber<T>
    {
        using MemoryLease<T> lease = buffer.BeginOperation();
        Add(lease, addend);
    }

    /// <summary>The sum of the elements (integers wrap around on overflow).</summary>
    /// <exception cref="ObjectDisposedException">The buffer was freed, or is <see langword="default"/>.</exception>
    public static T VectorSum<T>(this FixedBuffer<T> buffer)
        where T : unmanaged, INumber<T>
    {
        using MemoryLease<T> lease = buffer.BeginOperation();
        return Sum(lease);
    }

    /// <summary>The smallest element (NaN if any element is NaN).</summary>
    /// <exception cref="ObjectDisposedException">The buffer was freed, or is <see langword="default"/>.</exception>
    public static T VectorMin<T>(this FixedBuffer<T> buffer)
        where T : unmanaged, INumber<T>
    {
        using MemoryLease<T> lease = buffer.BeginOperation();
        return Min(lease);
    }

    /// <summary>The largest element (NaN if any element is NaN).</summary>
    /// <exception cref="ObjectDisposedException">The buffer was freed, or is <see langword="default"/>.</exception>
    public static T VectorMax<T>(this FixedBuffer<T> buffer)
        where T : unmanaged, INumber<T>
    {
        using MemoryLease<T> lease = buffer.BeginOperation();
        return Max(lease);
    }

    /// <summary>Whether every element is less than <paramref name="bound"/> (a NaN element never is).</summary>
    /// <exception cref="ObjectDisposedException">The buffer was freed, or is <see langword="default"/>.</exception>
    public static bool VectorAllLessThan<T>(this FixedBuffer<T> buffer, T bound)
        where T : unmanaged, INumber<T>
    {
        using MemoryLease<T> lease = buffer.BeginOperation();
        return AllLessThan(lease, bound);
    }

    /// <summary>Sets every element to <paramref name="value"/>, on the calling thread.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="buffer"/> is null.</exception>
    /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
    public static void VectorFill<T>(this NativeBuffer<T> buffer, T value)
        where T : unmanaged, INumber<T>
    {
        using MemoryLease<T> lease = Begin(buffer);
        Fill(lease, value);
    }

    /// <summary>Multiplies every element by <paramref name="factor"/> in place, on the calling thread.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="buffer"/> is null.</exception>
    /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
    public static void VectorMultiply<T>(this NativeBuffer<T> buffer, T factor)
        where T : unmanaged, INumber<T>
    {
        using MemoryLease<T> lease = Begin(buffer);
        Multiply(lease, factor);
    }

    /// <summary>Adds <paramref name="addend"/> to every element in place, on the calling thread.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="buffer"/> is null.</exception>
    /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
    public static void VectorAdd<T>(this NativeBuffer<T> buffer, T addend)
        where T : unmanaged, INumber<T>
    {
        using MemoryLease<T> lease = Begin(buffer);
        Add(lease, addend);
    }

    /// <summary>The sum of the elements (integers wrap around on overflow), on the calling thread.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="buffer"/> is null.</exception>
    /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
    public static T VectorSum<T>(this NativeBuffer<T> buffer)
        where T : unmanaged, INumber<T>
    {
        using MemoryLease<T> lease = Begin(buffer);
        return Sum(lease);
    }

    /// <summary>The smallest element (NaN if any element is NaN), on the calling thread.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="buffer"/> is null.</exception>
    /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
    public static T VectorMin<T>(this NativeBuffer<T> buffer)
        where T : unmanaged, INumber<T>
    {
        using MemoryLease<T> lease = Begin(buffer);
        return Min(lease);
    }

    /// <summary>The largest element (NaN if any element is NaN), on the calling thread.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="buffer"/> is null.</exception>
    /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
    public static T VectorMax<T>(this NativeBuffer<T> buffer)
        where T : unmanaged, INumber<T>
    {
        using MemoryLease<T> lease = Begin(buffer);
        return Max(lease);
    }

    /// <summary>Whether every element is less than <paramref name="bound"/> (a NaN element never is), on the calling thread.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="buffer"/> is null.</exception>
    /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
    public static bool VectorAllLessThan<T>(this NativeBuffer<T> buffer, T bound)
        where T : unmanaged, INumber<T>
    {
        using MemoryLease<T> lease = Begin(buffer);
        return AllLessThan(lease, bound);
    }

    /// <summary>Sets every element to <paramref name="value"/>, using every core.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="buffer"/> is null.</exception>
    /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
    public static void ParallelVectorFill<T>(this HugeBuffer<T> buffer, T value)
        where T : unmanaged, INumber<T>
    {
        using MemoryLease<T> lease = Begin(buffer);
        var partitions = Partitions<T>.Of(lease);
        // Whether to stream depends on the whole array, not on one partition: the cores share the last-level cache.
        FillPlan plan = SimdKernels.FillPlanFor<T>(lease.Length);
        if (partitions.Count == 1)
        {
            SimdKernels.Fill(partitions[0], value, plan);
            return;
        }

        // Partitions filled at once would time each other's slices: a parallel fill measures nothing.
        plan = plan.WithoutMeasuring();
        Parallel.For(0, partitions.Count, i => SimdKernels.Fill(partitions[i], value, plan));
    }

    /// <summary>Multiplies every element by <paramref name="factor"/> in place, using every core.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="buffer"/> is null.</exception>
    /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
    public static void ParallelVectorMultiply<T>(this HugeBuffer<T> buffer, T factor)
        where T : unmanaged, INumber<T> =>
        ForEachPartition(buffer, factor, static (span, f) => SimdKernels.Multiply(span, f));

    /// <summary>Adds <paramref name="addend"/> to every element in place, using every core.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="buffer"/> is null.</exception>
    /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
    public static void ParallelVectorAdd<T>(this HugeBuffer<T> buffer, T addend)
        where T : unmanaged, INumber<T> =>
        ForEachPartition(buffer, addend, static (span, a) => SimdKernels.Add(span, a));

    /// <summary>The sum of the elements (integers wrap around on overflow), using every core.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="buffer"/> is null.</exception>
    /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
    public static T ParallelVectorSum<T>(this HugeBuffer<T> buffer)
        where T : unmanaged, INumber<T>
    {
        T sum = T.Zero;
        foreach (T partial in ReducePartitions(buffer, static span => SimdKernels.Sum(span)))
        {
            sum += partial;
        }

        return sum;
    }

    /// <summary>The smallest element (NaN if any element is NaN), using every core.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="buffer"/> is null.</exception>
    /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
    public static T ParallelVectorMin<T>(this HugeBuffer<T> buffer)
        where T : unmanaged, INumber<T> =>
        SimdKernels.Min<T>(ReducePartitions(buffer, static span => SimdKernels.Min(span)));

    /// <summary>The largest element (NaN if any element is NaN), using every core.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="buffer"/> is null.</exception>
    /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
    public static T ParallelVectorMax<T>(this HugeBuffer<T> buffer)
        where T : unmanaged, INumber<T> =>
        SimdKernels.Max<T>(ReducePartitions(buffer, static span => SimdKernels.Max(span)));

    private static MemoryLease<T> Begin<T>(NativeBuffer<T> buffer)
        where T : unmanaged, IEquatable<T>
    {
        ArgumentNullException.ThrowIfNull(buffer);
        return buffer.BeginOperation();
    }

    // The kernels over a lease, chunk by chunk (one chunk unless the structure passes 1 GiB).
    private static void Fill<T>(in MemoryLease<T> lease, T value)
        where T : unmanaged, INumber<T>
    {
        FillPlan plan = SimdKernels.FillPlanFor<T>(lease.Length);
        foreach (Span<T> chunk in lease.GetChunks())
        {
            SimdKernels.Fill(chunk, value, plan);
        }
    }

    private static void Multiply<T>(in MemoryLease<T> lease, T factor)
        where T : unmanaged, INumber<T>
    {
        foreach (Span<T> chunk in lease.GetChunks())
        {
            SimdKernels.Multiply(chunk, factor);
        }
    }

    private static void Add<T>(in MemoryLease<T> lease, T addend)
        where T : unmanaged, INumber<T>
    {
        foreach (Span<T> chunk in lease.GetChunks())
        {
            SimdKernels.Add(chunk, addend);
        }
    }

    private static T Sum<T>(in MemoryLease<T> lease)
        where T : unmanaged, INumber<T>
    {
        T sum = T.Zero;
        foreach (Span<T> chunk in lease.GetChunks())
        {
            sum += SimdKernels.Sum<T>(chunk);
        }

        return sum;
    }

    private static T Min<T>(in MemoryLease<T> lease)
        where T : unmanaged, INumber<T>
    {
        T min = lease[0];
        foreach (Span<T> chunk in lease.GetChunks())
        {
            min = T.Min(min, SimdKernels.Min<T>(chunk));
        }

        return min;
    }

    private static T Max<T>(in MemoryLease<T> lease)
        where T : unmanaged, INumber<T>
    {
        T max = lease[0];
        foreach (Span<T> chunk in lease.GetChunks())
        {
            max = T.Max(max, SimdKernels.Max<T>(chunk));
        }

        return max;
    }

    private static bool AllLessThan<T>(in MemoryLease<T> lease, T bound)
        where T : unmanaged, INumber<T>
    {
        foreach (Span<T> chunk in lease.GetChunks())
        {
            if (!SimdKernels.AllLessThan<T>(chunk, bound))
            {
                return false;
            }
        }

        return true;
    }

    private delegate void SpanAction<T>(Span<T> span, T argument);

    private delegate T SpanReduction<T>(ReadOnlySpan<T> span);

    /// <summary>The partitions of a leased array: at least one per core, none longer than a 1 GiB chunk, aligned.</summary>
    private readonly unsafe record struct Partitions<T>(nint Address, long Length, int Count, long PartitionLength)
        where T : unmanaged
    {
        internal static Partitions<T> Of(in MemoryLease<T> lease)
        {
            long length = lease.Length;
            long chunk = Math.Max(1, (1 << 30) / sizeof(T));
            if (length < ParallelThreshold)
            {
                return new(lease.Pointer, length, 1, length);
            }

            long count = Math.Max(Environment.ProcessorCount, (length + chunk - 1) / chunk);
            long partitionLength = (length + count - 1) / count;
            partitionLength = (partitionLength + PartitionAlignment - 1) / PartitionAlignment * PartitionAlignment;
            partitionLength = Math.Min(partitionLength, chunk);
            return new(lease.Pointer, length, (int)((length + partitionLength - 1) / partitionLength), partitionLength);
        }

        internal Span<T> this[int index]
        {
            get
            {
                long start = index * PartitionLength;
                return new Span<T>((T*)Address + start, (int)Math.Min(PartitionLength, Length - start));
            }
        }
    }

    private static void ForEachPartition<T>(HugeBuffer<T> buffer, T argument, SpanAction<T> action)
        where T : unmanaged, INumber<T>
    {
        using MemoryLease<T> lease = Begin(buffer);
        var partitions = Partitions<T>.Of(lease);
        if (partitions.Count == 1)
        {
            action(partitions[0], argument);
            return;
        }

        Parallel.For(0, partitions.Count, i => action(partitions[i], argument));
    }

    private static T[] ReducePartitions<T>(HugeBuffer<T> buffer, SpanReduction<T> reduce)
        where T : unmanaged, INumber<T>
    {
        using MemoryLease<T> lease = Begin(buffer);
        var partitions = Partitions<T>.Of(lease);
        var partials = new T[partitions.Count];
        if (partitions.Count == 1)
        {
            partials[0] = reduce(partitions[0]);
        }
        else
        {
            Parallel.For(0, partitions.Count, i => partials[i] = reduce(partitions[i]));
        }

        return partials;
    }
}
