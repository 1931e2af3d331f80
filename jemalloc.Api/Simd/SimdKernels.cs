using System.Numerics;
using System.Numerics.Tensors;

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
    /// Sets every element of <paramref name="span"/> to <paramref name="value"/>: with non-temporal
    /// stores when <paramref name="nonTemporal"/> (the caller's structure is large, see
    /// <see cref="NonTemporalFill.ShouldUse"/>) and the CPU has them, otherwise with <see cref="Span{T}.Fill"/>.
    /// The one fill kernel of every structure's <c>Fill</c>, <c>VectorFill</c> and <c>ParallelVectorFill</c>.
    /// </summary>
    internal static void Fill<T>(Span<T> span, T value, bool nonTemporal)
        where T : unmanaged
    {
        if (nonTemporal)
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

    /// <summary>Whether a fill of a whole structure of <paramref name="length"/> elements should use non-temporal stores.</summary>
    internal static bool FillsNonTemporally<T>(long length)
        where T : unmanaged => NonTemporalFill.ShouldUse((nuint)length * (nuint)sizeof(T));

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
