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
    /// <summary>
    /// Sets every element of <paramref name="span"/> to <paramref name="value"/> with the kernel
    /// <see cref="FillPolicy"/> chose for the caller's whole structure (<see cref="FillPlanFor{T}"/>):
    /// <see cref="Span{T}.Fill"/>, or non-temporal stores where the CPU has them. While the automatic
    /// choice of the structure's size band is not made, one thread at a time measures: its fill is
    /// written and timed by one kernel or the other in turn (<see cref="FillMeasuring{T}"/>); the
    /// others use <see cref="Span{T}.Fill"/>.
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
    /// Fills <paramref name="count"/> elements at <paramref name="destination"/> with the kernel whose
    /// turn it is (<see cref="FillMeasurement.TakeTurn"/>), and adds the fill's time to
    /// <paramref name="measurement"/>. The whole fill is timed: a part of it smaller than the
    /// last-level cache would time ordinary stores before their lines are written back, which a fill
    /// larger than the cache cannot avoid. The pages are faulted in first, untimed: a fresh block's
    /// first fill would otherwise time the page faults (the same for both kernels), not the stores.
    /// </summary>
    internal static void FillMeasuring<T>(T* destination, nuint count, T value, FillMeasurement measurement)
        where T : unmanaged
    {
        TouchPages(destination, count, value);
        bool nonTemporal = measurement.TakeTurn();
        long started = Stopwatch.GetTimestamp();
        if (nonTemporal && NonTemporalFill.TryFill(destination, count, value))
        {
            measurement.Add(nonTemporal: true, (long)(count * (nuint)sizeof(T)), Stopwatch.GetElapsedTime(started).TotalSeconds);
            return;
        }

        OrdinaryFill(destination, count, value);
        if (!nonTemporal)
        {
            measurement.Add(nonTemporal: false, (long)(count * (nuint)sizeof(T)), Stopwatch.GetElapsedTime(started).TotalSeconds);
        }
    }

    // Writes the element at the start of each page, first to last, before the fill is timed: a page
    // not yet given to the process (a new block's) faults on its first write, which costs far more
    // than the stores. Touched in order, the pages the fill writes first were zeroed longest ago and
    // have left the cache, as in any fill larger than it. The fill writes the same value over them.
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
