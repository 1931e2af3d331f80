using System.Diagnostics;
using System.Numerics;
using System.Numerics.Tensors;
using System.Runtime.InteropServices;

namespace jemalloc.Simd;

/// <summary>
/// The vector kernels behind <see cref="VectorOperations"/>, over one span. They use
/// <see cref="TensorPrimitives"/>, which picks the widest vectors the CPU offers (Vector512, 256 or
/// 128) and handles the tail, so every length is correct; integer arithmetic wraps around exactly
/// as a scalar loop does.
/// </summary>
internal static unsafe class SimdKernels
{
    // The measuring fill's slices: long enough that what one slice leaves to drain (dirty lines,
    // queued streaming writes) is small beside it, short enough that a slice rarely meets a
    // preemption and a big fill holds many. The part it times starts on a 2 MiB boundary.
    internal const nuint SliceBytes = 4 * 1024 * 1024;
    private const nuint SliceAlignment = 2 * 1024 * 1024;

    /// <summary>
    /// Sets every element of <paramref name="span"/> to <paramref name="value"/> with the kernel
    /// <see cref="FillPolicy"/> chose for the caller's whole structure (<see cref="FillPlanFor{T}"/>):
    /// <see cref="Span{T}.Fill"/>, or non-temporal stores where the CPU has them. While the automatic
    /// choice of the structure's size band is not made, one thread at a time measures both kernels on
    /// this span's slices (<see cref="FillMeasuring{T}"/>); the others use <see cref="Span{T}.Fill"/>.
    /// The one fill kernel of every structure's <c>Fill</c>, <c>VectorFill</c>, <c>ParallelVectorFill</c>
    /// and create-with-value constructor.
    /// </summary>
    internal static void Fill<T>(Span<T> span, T value, FillPlan plan)
        where T : unmanaged
    {
        FillKernel kernel = plan.Kernel;
        if (kernel == FillKernel.Undecided)
        {
            kernel = FillPolicy.Decided(plan.Band);
            if (kernel == FillKernel.Undecided)
            {
                if (NonTemporalFill.CanStream<T>() && FillPolicy.TryBeginMeasuring(plan.Band))
                {
                    try
                    {
                        fixed (T* pointer = span)
                        {
                            FillMeasuring(pointer, (nuint)span.Length, value, FillPolicy.Measurement(plan.Band));
                        }
                    }
                    finally
                    {
                        FillPolicy.EndMeasuring(plan.Band);
                    }

                    return;
                }

                kernel = FillKernel.Ordinary;
            }
        }

        if (kernel == FillKernel.NonTemporal)
        {
            fixed (T* pointer = span)
            {
                if (NonTemporalFill.TryFill(pointer, (nuint)span.Length, value))
                {
                    return;
                }
            }
        }

        span.Fill(value);
    }

    /// <summary>The plan for a fill of a whole structure of <paramref name="length"/> elements (it may measure).</summary>
    internal static FillPlan FillPlanFor<T>(long length)
        where T : unmanaged => FillPolicy.PlanFor((nuint)length * (nuint)sizeof(T));

    /// <summary>
    /// Fills <paramref name="count"/> elements at <paramref name="destination"/> in slices written
    /// alternately by the ordinary and the streaming kernel, timing each into <paramref name="measurement"/>.
    /// The first part (up to the last-level cache's size, at most half) is written ordinarily and not
    /// timed: it leaves the cache full of written lines, as it is in the rest of any big fill. Pairs
    /// of slices alternate which kernel goes first (AB BA BA AB ...), so neither always follows the
    /// other; the pages of the timed part are faulted in before any slice is timed (a fresh block's
    /// first fill would otherwise time the page faults, the same for both kernels, not the stores).
    /// </summary>
    internal static void FillMeasuring<T>(T* destination, nuint count, T value, FillMeasurement measurement, nuint sliceBytes = SliceBytes)
        where T : unmanaged
    {
        nuint size = (nuint)sizeof(T);
        byte* start = (byte*)destination;
        nuint warmBytes = Math.Min((nuint)LastLevelCache.Bytes, count * size / 2);
        nuint aligned = ((nuint)start + warmBytes + SliceAlignment - 1) & ~(SliceAlignment - 1);
        nuint done = Math.Min(count, (aligned - (nuint)start + size - 1) / size);
        OrdinaryFill(destination, done, value);

        TouchPages(destination + done, count - done, value);
        nuint slice = Math.Max(1, sliceBytes / size);
        double tick = 1.0 / Stopwatch.Frequency;
        for (nuint i = 0; count - done >= slice; i++, done += slice)
        {
            nuint round = i / 2;
            bool nonTemporal = ((i ^ round ^ (round >> 1)) & 1) != 0;
            long started = Stopwatch.GetTimestamp();
            if (!nonTemporal || !NonTemporalFill.TryFill(destination + done, slice, value))
            {
                OrdinaryFill(destination + done, slice, value);
            }

            measurement.Add(nonTemporal, (long)(slice * size), (Stopwatch.GetTimestamp() - started) * tick);
        }

        OrdinaryFill(destination + done, count - done, value);
    }

    // Writes the element at the start of each page of the part to be timed, first to last, before
    // any slice is timed: a page not yet given to the process (a new block's) faults on its first
    // write, which costs far more than the stores, and the kernel leaves the page it zeroed in the
    // cache, where ordinary stores would find it. Touched in order, the pages the first slices
    // write were zeroed longest ago and have left the cache. The slices write the same value over them.
    private static void TouchPages<T>(T* slice, nuint count, T value)
        where T : unmanaged
    {
        nuint size = (nuint)sizeof(T);
        nuint pageSize = (nuint)Environment.SystemPageSize;
        nuint start = (nuint)slice;
        nuint end = start + (count * size);
        for (nuint page = start & ~(pageSize - 1); page < end; page += pageSize)
        {
            nuint element = page <= start ? 0 : (page - start) / size;
            slice[element] = value;
        }
    }

    /// <summary>Clears <paramref name="bytes"/> bytes at <paramref name="address"/> with <paramref name="kernel"/> (never measuring).</summary>
    internal static void Clear(byte* address, nuint bytes, FillKernel kernel)
    {
        if (kernel != FillKernel.NonTemporal || !NonTemporalFill.TryFill(address, bytes, (byte)0))
        {
            NativeMemory.Clear(address, bytes);
        }
    }

    /// <summary>
    /// Copies <paramref name="source"/> to <paramref name="destination"/> (as <see cref="ReadOnlySpan{T}.CopyTo"/>,
    /// which it is for small copies, overlapping ones and lengths that differ), streaming the stores
    /// when <see cref="FillPolicy"/> streams a write of this size.
    /// </summary>
    /// <exception cref="ArgumentException"><paramref name="destination"/> is shorter than <paramref name="source"/>.</exception>
    internal static void Copy<T>(ReadOnlySpan<T> source, Span<T> destination)
        where T : unmanaged
    {
        nuint bytes = (nuint)source.Length * (nuint)sizeof(T);
        if (source.Length == destination.Length && FillPolicy.KernelFor(bytes, mayMeasure: false) == FillKernel.NonTemporal)
        {
            fixed (T* from = source)
            fixed (T* to = destination)
            {
                if (NonTemporalCopy.TryCopy((byte*)to, (byte*)from, bytes))
                {
                    return;
                }
            }
        }

        source.CopyTo(destination);
    }

    /// <summary>Copies the elements of <paramref name="source"/> into a new managed array, by <see cref="Copy{T}"/>.</summary>
    internal static T[] ToArray<T>(ReadOnlySpan<T> source)
        where T : unmanaged
    {
        if (source.IsEmpty)
        {
            return [];
        }

        T[] array = GC.AllocateUninitializedArray<T>(source.Length);
        Copy(source, array);
        return array;
    }

    private static void OrdinaryFill<T>(T* destination, nuint count, T value)
        where T : unmanaged
    {
        // Spans hold at most int.MaxValue elements; the structures' chunks never pass 1 GiB.
        for (nuint done = 0; done < count;)
        {
            int part = (int)Math.Min(count - done, (nuint)int.MaxValue);
            new Span<T>(destination + done, part).Fill(value);
            done += (nuint)part;
        }
    }

    internal static void Multiply<T>(Span<T> span, T factor)
        where T : INumber<T> => TensorPrimitives.Multiply(span, factor, span);

    internal static void Add<T>(Span<T> span, T addend)
        where T : INumber<T> => TensorPrimitives.Add(span, addend, span);

    internal static T Sum<T>(ReadOnlySpan<T> span)
        where T : INumber<T> => TensorPrimitives.Sum(span);

    internal static T Min<T>(ReadOnlySpan<T> span)
        where T : INumber<T> => TensorPrimitives.Min(span);

    internal static T Max<T>(ReadOnlySpan<T> span)
        where T : INumber<T> => TensorPrimitives.Max(span);

    /// <summary>Whether every element is less than <paramref name="bound"/> (false for NaN); stops at the first that is not.</summary>
    internal static bool AllLessThan<T>(ReadOnlySpan<T> span, T bound)
        where T : unmanaged, INumber<T>
    {
        int i = 0;
        if (Vector.IsHardwareAccelerated && Vector<T>.IsSupported && span.Length >= Vector<T>.Count)
        {
            var bounds = new Vector<T>(bound);
            int lastVector = span.Length - Vector<T>.Count;
            for (; i <= lastVector; i += Vector<T>.Count)
            {
                if (!Vector.LessThanAll(new Vector<T>(span[i..]), bounds))
                {
                    return false;
                }
            }

            // The tail: one more vector ending at the last element (it may overlap elements already checked).
            return i == span.Length || Vector.LessThanAll(new Vector<T>(span[lastVector..]), bounds);
        }

        for (; i < span.Length; i++)
        {
            if (!(span[i] < bound))
            {
                return false;
            }
        }

        return true;
    }
}
