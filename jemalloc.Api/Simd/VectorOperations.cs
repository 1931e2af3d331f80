using System.Numerics;
using jemalloc.Simd;

namespace jemalloc;

/// <summary>
/// SIMD operations over the numeric elements of <see cref="FixedBuffer{T}"/>, <see cref="SafeBuffer{T}"/>
/// and <see cref="HugeBuffer{T}"/>, using the widest vectors the CPU offers; every length is handled
/// (the tail too). Integer results equal a scalar loop's, with the same wrap-around on overflow;
/// floating-point sums may differ from a scalar loop's by rounding, because the order of additions differs.
/// </summary>
/// <remarks>
/// Each operation checks the structure once and holds it acquired while it runs, so a concurrent
/// free or dispose from another thread throws <see cref="InvalidOperationException"/> there instead
/// of freeing memory in use. The <c>Parallel</c> forms on <see cref="HugeBuffer{T}"/> split the array
/// into partitions run on the thread pool, each with the same SIMD kernel.
/// </remarks>
public static unsafe class VectorOperations
{
    // Below this many elements a parallel operation runs on the calling thread: splitting costs more than it saves.
    private const long ParallelThreshold = 1 << 18;
    // Partition boundaries are multiples of this many elements, keeping threads off each other's cache lines.
    private const int PartitionAlignment = 1024;

    /// <summary>Sets every element to <paramref name="value"/>.</summary>
    /// <exception cref="ObjectDisposedException">The buffer was freed.</exception>
    public static void VectorFill<T>(this FixedBuffer<T> buffer, T value)
        where T : unmanaged, INumber<T>
    {
        buffer.Acquire();
        try
        {
            SimdKernels.Fill(new Span<T>(buffer.UnsafePointer, buffer.Length), value);
        }
        finally
        {
            buffer.Release();
        }
    }

    /// <summary>Multiplies every element by <paramref name="factor"/> in place.</summary>
    /// <exception cref="ObjectDisposedException">The buffer was freed.</exception>
    public static void VectorMultiply<T>(this FixedBuffer<T> buffer, T factor)
        where T : unmanaged, INumber<T>
    {
        buffer.Acquire();
        try
        {
            SimdKernels.Multiply(new Span<T>(buffer.UnsafePointer, buffer.Length), factor);
        }
        finally
        {
            buffer.Release();
        }
    }

    /// <summary>Adds <paramref name="addend"/> to every element in place.</summary>
    /// <exception cref="ObjectDisposedException">The buffer was freed.</exception>
    public static void VectorAdd<T>(this FixedBuffer<T> buffer, T addend)
        where T : unmanaged, INumber<T>
    {
        buffer.Acquire();
        try
        {
            SimdKernels.Add(new Span<T>(buffer.UnsafePointer, buffer.Length), addend);
        }
        finally
        {
            buffer.Release();
        }
    }

    /// <summary>The sum of the elements (integers wrap around on overflow).</summary>
    /// <exception cref="ObjectDisposedException">The buffer was freed.</exception>
    public static T VectorSum<T>(this FixedBuffer<T> buffer)
        where T : unmanaged, INumber<T>
    {
        buffer.Acquire();
        try
        {
            return SimdKernels.Sum(new ReadOnlySpan<T>(buffer.UnsafePointer, buffer.Length));
        }
        finally
        {
            buffer.Release();
        }
    }

    /// <summary>The smallest element (NaN if any element is NaN).</summary>
    /// <exception cref="ObjectDisposedException">The buffer was freed.</exception>
    public static T VectorMin<T>(this FixedBuffer<T> buffer)
        where T : unmanaged, INumber<T>
    {
        buffer.Acquire();
        try
        {
            return SimdKernels.Min(new ReadOnlySpan<T>(buffer.UnsafePointer, buffer.Length));
        }
        finally
        {
            buffer.Release();
        }
    }

    /// <summary>The largest element (NaN if any element is NaN).</summary>
    /// <exception cref="ObjectDisposedException">The buffer was freed.</exception>
    public static T VectorMax<T>(this FixedBuffer<T> buffer)
        where T : unmanaged, INumber<T>
    {
        buffer.Acquire();
        try
        {
            return SimdKernels.Max(new ReadOnlySpan<T>(buffer.UnsafePointer, buffer.Length));
        }
        finally
        {
            buffer.Release();
        }
    }

    /// <summary>Whether every element is less than <paramref name="bound"/> (a NaN element never is).</summary>
    /// <exception cref="ObjectDisposedException">The buffer was freed.</exception>
    public static bool VectorAllLessThan<T>(this FixedBuffer<T> buffer, T bound)
        where T : unmanaged, INumber<T>
    {
        buffer.Acquire();
        try
        {
            return SimdKernels.AllLessThan(new ReadOnlySpan<T>(buffer.UnsafePointer, buffer.Length), bound);
        }
        finally
        {
            buffer.Release();
        }
    }

    /// <summary>Sets every element to <paramref name="value"/>.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="buffer"/> is null.</exception>
    /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
    public static void VectorFill<T>(this SafeBuffer<T> buffer, T value)
        where T : unmanaged, INumber<T>
    {
        Span<T> span = AcquireSpan(buffer);
        try
        {
            SimdKernels.Fill(span, value);
        }
        finally
        {
            buffer.Release();
        }
    }

    /// <summary>Multiplies every element by <paramref name="factor"/> in place.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="buffer"/> is null.</exception>
    /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
    public static void VectorMultiply<T>(this SafeBuffer<T> buffer, T factor)
        where T : unmanaged, INumber<T>
    {
        Span<T> span = AcquireSpan(buffer);
        try
        {
            SimdKernels.Multiply(span, factor);
        }
        finally
        {
            buffer.Release();
        }
    }

    /// <summary>Adds <paramref name="addend"/> to every element in place.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="buffer"/> is null.</exception>
    /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
    public static void VectorAdd<T>(this SafeBuffer<T> buffer, T addend)
        where T : unmanaged, INumber<T>
    {
        Span<T> span = AcquireSpan(buffer);
        try
        {
            SimdKernels.Add(span, addend);
        }
        finally
        {
            buffer.Release();
        }
    }

    /// <summary>The sum of the elements (integers wrap around on overflow).</summary>
    /// <exception cref="ArgumentNullException"><paramref name="buffer"/> is null.</exception>
    /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
    public static T VectorSum<T>(this SafeBuffer<T> buffer)
        where T : unmanaged, INumber<T>
    {
        Span<T> span = AcquireSpan(buffer);
        try
        {
            return SimdKernels.Sum<T>(span);
        }
        finally
        {
            buffer.Release();
        }
    }

    /// <summary>The smallest element (NaN if any element is NaN).</summary>
    /// <exception cref="ArgumentNullException"><paramref name="buffer"/> is null.</exception>
    /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
    public static T VectorMin<T>(this SafeBuffer<T> buffer)
        where T : unmanaged, INumber<T>
    {
        Span<T> span = AcquireSpan(buffer);
        try
        {
            return SimdKernels.Min<T>(span);
        }
        finally
        {
            buffer.Release();
        }
    }

    /// <summary>The largest element (NaN if any element is NaN).</summary>
    /// <exception cref="ArgumentNullException"><paramref name="buffer"/> is null.</exception>
    /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
    public static T VectorMax<T>(this SafeBuffer<T> buffer)
        where T : unmanaged, INumber<T>
    {
        Span<T> span = AcquireSpan(buffer);
        try
        {
            return SimdKernels.Max<T>(span);
        }
        finally
        {
            buffer.Release();
        }
    }

    /// <summary>Whether every element is less than <paramref name="bound"/> (a NaN element never is).</summary>
    /// <exception cref="ArgumentNullException"><paramref name="buffer"/> is null.</exception>
    /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
    public static bool VectorAllLessThan<T>(this SafeBuffer<T> buffer, T bound)
        where T : unmanaged, INumber<T>
    {
        Span<T> span = AcquireSpan(buffer);
        try
        {
            return SimdKernels.AllLessThan<T>(span, bound);
        }
        finally
        {
            buffer.Release();
        }
    }

    /// <summary>Sets every element to <paramref name="value"/>, chunk by chunk on the calling thread.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="buffer"/> is null.</exception>
    /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
    public static void VectorFill<T>(this HugeBuffer<T> buffer, T value)
        where T : unmanaged, INumber<T>
    {
        ArgumentNullException.ThrowIfNull(buffer);
        buffer.Fill(value);
    }

    /// <summary>Multiplies every element by <paramref name="factor"/> in place, chunk by chunk on the calling thread.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="buffer"/> is null.</exception>
    /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
    public static void VectorMultiply<T>(this HugeBuffer<T> buffer, T factor)
        where T : unmanaged, INumber<T>
    {
        AcquireHuge(buffer);
        try
        {
            foreach (Span<T> chunk in buffer.GetChunks())
            {
                SimdKernels.Multiply(chunk, factor);
            }
        }
        finally
        {
            buffer.Release();
        }
    }

    /// <summary>Adds <paramref name="addend"/> to every element in place, chunk by chunk on the calling thread.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="buffer"/> is null.</exception>
    /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
    public static void VectorAdd<T>(this HugeBuffer<T> buffer, T addend)
        where T : unmanaged, INumber<T>
    {
        AcquireHuge(buffer);
        try
        {
            foreach (Span<T> chunk in buffer.GetChunks())
            {
                SimdKernels.Add(chunk, addend);
            }
        }
        finally
        {
            buffer.Release();
        }
    }

    /// <summary>The sum of the elements (integers wrap around on overflow), on the calling thread.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="buffer"/> is null.</exception>
    /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
    public static T VectorSum<T>(this HugeBuffer<T> buffer)
        where T : unmanaged, INumber<T>
    {
        AcquireHuge(buffer);
        try
        {
            T sum = T.Zero;
            foreach (Span<T> chunk in buffer.GetChunks())
            {
                sum += SimdKernels.Sum<T>(chunk);
            }

            return sum;
        }
        finally
        {
            buffer.Release();
        }
    }

    /// <summary>The smallest element (NaN if any element is NaN), on the calling thread.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="buffer"/> is null.</exception>
    /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
    public static T VectorMin<T>(this HugeBuffer<T> buffer)
        where T : unmanaged, INumber<T>
    {
        AcquireHuge(buffer);
        try
        {
            T min = buffer[0];
            foreach (Span<T> chunk in buffer.GetChunks())
            {
                min = T.Min(min, SimdKernels.Min<T>(chunk));
            }

            return min;
        }
        finally
        {
            buffer.Release();
        }
    }

    /// <summary>The largest element (NaN if any element is NaN), on the calling thread.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="buffer"/> is null.</exception>
    /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
    public static T VectorMax<T>(this HugeBuffer<T> buffer)
        where T : unmanaged, INumber<T>
    {
        AcquireHuge(buffer);
        try
        {
            T max = buffer[0];
            foreach (Span<T> chunk in buffer.GetChunks())
            {
                max = T.Max(max, SimdKernels.Max<T>(chunk));
            }

            return max;
        }
        finally
        {
            buffer.Release();
        }
    }

    /// <summary>Whether every element is less than <paramref name="bound"/> (a NaN element never is), on the calling thread.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="buffer"/> is null.</exception>
    /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
    public static bool VectorAllLessThan<T>(this HugeBuffer<T> buffer, T bound)
        where T : unmanaged, INumber<T>
    {
        AcquireHuge(buffer);
        try
        {
            foreach (Span<T> chunk in buffer.GetChunks())
            {
                if (!SimdKernels.AllLessThan<T>(chunk, bound))
                {
                    return false;
                }
            }

            return true;
        }
        finally
        {
            buffer.Release();
        }
    }

    /// <summary>Sets every element to <paramref name="value"/>, using every core.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="buffer"/> is null.</exception>
    /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
    public static void ParallelVectorFill<T>(this HugeBuffer<T> buffer, T value)
        where T : unmanaged, INumber<T> =>
        ForEachPartition(buffer, value, static (span, v) => SimdKernels.Fill(span, v));

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
        T[] partials = ReducePartitions(buffer, static span => SimdKernels.Sum<T>(span));
        T sum = T.Zero;
        foreach (T partial in partials)
        {
            sum += partial;
        }

        return sum;
    }

    /// <summary>The smallest element (NaN if any element is NaN), using every core.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="buffer"/> is null.</exception>
    /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
    public static T ParallelVectorMin<T>(this HugeBuffer<T> buffer)
        where T : unmanaged, INumber<T>
    {
        T[] partials = ReducePartitions(buffer, static span => SimdKernels.Min<T>(span));
        return SimdKernels.Min<T>(partials);
    }

    /// <summary>The largest element (NaN if any element is NaN), using every core.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="buffer"/> is null.</exception>
    /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
    public static T ParallelVectorMax<T>(this HugeBuffer<T> buffer)
        where T : unmanaged, INumber<T>
    {
        T[] partials = ReducePartitions(buffer, static span => SimdKernels.Max<T>(span));
        return SimdKernels.Max<T>(partials);
    }

    private static Span<T> AcquireSpan<T>(SafeBuffer<T> buffer)
        where T : unmanaged, IEquatable<T>
    {
        ArgumentNullException.ThrowIfNull(buffer);
        buffer.Acquire();
        return new Span<T>(buffer.UnsafePointer, buffer.Length);
    }

    private static void AcquireHuge<T>(HugeBuffer<T> buffer)
        where T : unmanaged, IEquatable<T>
    {
        ArgumentNullException.ThrowIfNull(buffer);
        buffer.Acquire();
    }

    private delegate void SpanAction<T>(Span<T> span, T argument);

    private delegate T SpanReduction<T>(ReadOnlySpan<T> span);

    /// <summary>Splits the array into partitions of at most one chunk each, at least one per core.</summary>
    private static (int Count, long Length) Partition<T>(HugeBuffer<T> buffer)
        where T : unmanaged, IEquatable<T>
    {
        long length = buffer.Length;
        if (length < ParallelThreshold)
        {
            return (1, length);
        }

        long count = Math.Max(Environment.ProcessorCount, (length + buffer.DefaultChunkLength - 1) / buffer.DefaultChunkLength);
        long partitionLength = (length + count - 1) / count;
        partitionLength = (partitionLength + PartitionAlignment - 1) / PartitionAlignment * PartitionAlignment;
        partitionLength = Math.Min(partitionLength, buffer.DefaultChunkLength);
        return ((int)((length + partitionLength - 1) / partitionLength), partitionLength);
    }

    private static Span<T> PartitionSpan<T>(HugeBuffer<T> buffer, int index, long partitionLength)
        where T : unmanaged, IEquatable<T>
    {
        long start = index * partitionLength;
        return new Span<T>(buffer.UnsafePointer + start, (int)Math.Min(partitionLength, buffer.Length - start));
    }

    private static void ForEachPartition<T>(HugeBuffer<T> buffer, T argument, SpanAction<T> action)
        where T : unmanaged, INumber<T>
    {
        AcquireHuge(buffer);
        try
        {
            var (count, partitionLength) = Partition(buffer);
            if (count == 1)
            {
                action(PartitionSpan(buffer, 0, partitionLength), argument);
                return;
            }

            Parallel.For(0, count, i => action(PartitionSpan(buffer, i, partitionLength), argument));
        }
        finally
        {
            buffer.Release();
        }
    }

    private static T[] ReducePartitions<T>(HugeBuffer<T> buffer, SpanReduction<T> reduce)
        where T : unmanaged, INumber<T>
    {
        AcquireHuge(buffer);
        try
        {
            var (count, partitionLength) = Partition(buffer);
            var partials = new T[count];
            if (count == 1)
            {
                partials[0] = reduce(PartitionSpan(buffer, 0, partitionLength));
            }
            else
            {
                Parallel.For(0, count, i => partials[i] = reduce(PartitionSpan(buffer, i, partitionLength)));
            }

            return partials;
        }
        finally
        {
            buffer.Release();
        }
    }
}
