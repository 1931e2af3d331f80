using System.Numerics;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.Simd;

/// <summary>
/// Every vector operation against a plain scalar loop, for every numeric element type and for
/// lengths around every vector width (16 to 64 bytes), so the tails are exercised.
/// </summary>
[Collection(LeakChecked.Name)]
public sealed class VectorOperationsTests : LeakCheckedTest
{
    // Around every vector width in elements (1-byte to 8-byte elements in 16- to 64-byte vectors), odd lengths, and long ones.
    private static readonly int[] Lengths = [1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257, 511, 1000, 1001, 4099];

    [Fact]
    public void Integer_operations_equal_a_scalar_loop_with_wrap_around()
    {
        CheckAll<byte>();
        CheckAll<sbyte>();
        CheckAll<short>();
        CheckAll<ushort>();
        CheckAll<int>();
        CheckAll<uint>();
        CheckAll<long>();
        CheckAll<ulong>();
        CheckAll<nint>();
        CheckAll<nuint>();
    }

    [Fact]
    public void Floating_point_operations_match_a_scalar_loop_within_rounding()
    {
        CheckAll<float>();
        CheckAll<double>();
    }

    [Fact]
    public void Floating_point_sums_of_small_integers_are_exact_in_any_order()
    {
        // Integer values whose every partial sum is below 2^24 (float) or 2^53 (double) are added
        // without rounding in any order, so the vector sum must equal the scalar sum exactly: an
        // element dropped or counted twice anywhere (a tail, a partition edge) cannot hide in a tolerance.
        var random = new Random(11);
        foreach (int length in Lengths)
        {
            float[] floats = Enumerable.Range(0, length).Select(_ => (float)random.Next(-1000, 1001)).ToArray();
            double[] doubles = floats.Select(f => (double)f).ToArray();
            float expectedFloat = ScalarSum<float>(floats);
            double expectedDouble = ScalarSum<double>(doubles);

            var fixedBuffer = new FixedBuffer<float>(floats);
            try
            {
                Assert.Equal(expectedFloat, fixedBuffer.VectorSum());
            }
            finally
            {
                fixedBuffer.Free();
            }

            using var safeArray = new SafeArray<double>(doubles);
            Assert.Equal(expectedDouble, safeArray.VectorSum());
            using var hugeArray = new HugeArray<float>(length);
            hugeArray.CopyFrom(floats, 0);
            Assert.Equal(expectedFloat, hugeArray.VectorSum());
            Assert.Equal(expectedFloat, hugeArray.ParallelVectorSum());
        }

        // A parallel sum over many partitions: 1,000,003 values of at most 1000 stay below 2^53.
        double[] many = Enumerable.Range(0, 1_000_003).Select(_ => (double)random.Next(-1000, 1001)).ToArray();
        using var big = new HugeArray<double>(many.Length);
        big.CopyFrom(many, 0);
        Assert.Equal(ScalarSum<double>(many), big.ParallelVectorSum());
    }

    [Fact]
    public void Parallel_floating_point_sum_of_a_big_array_is_within_the_rounding_bound()
    {
        var random = new Random(13);
        double[] values = Enumerable.Range(0, 1_000_003).Select(_ => (random.NextDouble() * 2000) - 1000).ToArray();
        using var array = new HugeArray<double>(values.Length);
        array.CopyFrom(values, 0);
        AssertSumWithinBound(values, array.ParallelVectorSum());
        Assert.Equal(values.Min(), array.ParallelVectorMin());
        Assert.Equal(values.Max(), array.ParallelVectorMax());
    }

    [Fact]
    public void Parallel_HugeArray_operations_equal_the_scalar_loop()
    {
        var random = new Random(7);
        const int length = 1_000_003;
        long[] values = Enumerable.Range(0, length).Select(_ => random.NextInt64()).ToArray();
        using var array = new HugeArray<long>(length);
        array.CopyFrom(values, 0);

        Assert.Equal(ScalarSum<long>(values), array.ParallelVectorSum());
        Assert.Equal(values.Min(), array.ParallelVectorMin());
        Assert.Equal(values.Max(), array.ParallelVectorMax());

        array.ParallelVectorMultiply(3);
        array.ParallelVectorAdd(-5);
        long[] actual = new long[length];
        array.CopyTo(actual, 0);
        Assert.Equal(values.Select(v => unchecked((v * 3) - 5)).ToArray(), actual);

        array.ParallelVectorFill(11);
        array.CopyTo(actual, 0);
        Assert.All(actual, v => Assert.Equal(11, v));
        Assert.Equal(11L * length, array.ParallelVectorSum());
    }

    [Fact]
    public void Parallel_forms_on_small_arrays_run_on_one_partition_and_are_still_right()
    {
        using var array = new HugeArray<int>(5);
        array.CopyFrom([4, -2, 9, 0, 1], 0);
        Assert.Equal(12, array.ParallelVectorSum());
        Assert.Equal(-2, array.ParallelVectorMin());
        Assert.Equal(9, array.ParallelVectorMax());
        array.ParallelVectorMultiply(2);
        array.ParallelVectorAdd(1);
        Assert.Equal([9, -3, 19, 1, 3], array.ToArray());
        array.ParallelVectorFill(0);
        Assert.Equal(0, array.ParallelVectorSum());
    }

    [Fact]
    public void NaN_makes_min_and_max_NaN_and_all_less_than_false()
    {
        var buffer = new FixedBuffer<double>([1, double.NaN, -3]);
        Assert.True(double.IsNaN(buffer.VectorMin()));
        Assert.True(double.IsNaN(buffer.VectorMax()));
        Assert.False(buffer.VectorAllLessThan(100));
        buffer.Free();
    }

    [Fact]
    public void Operations_on_freed_or_disposed_structures_throw_ObjectDisposedException()
    {
        var buffer = new FixedBuffer<int>(10);
        buffer.Free();
        var safe = new SafeArray<int>(10);
        safe.Dispose();
        var huge = new HugeArray<int>(10);
        huge.Dispose();

        Assert.Throws<ObjectDisposedException>(() => buffer.VectorFill(1));
        Assert.Throws<ObjectDisposedException>(() => buffer.VectorMultiply(1));
        Assert.Throws<ObjectDisposedException>(() => buffer.VectorAdd(1));
        Assert.Throws<ObjectDisposedException>(() => buffer.VectorSum());
        Assert.Throws<ObjectDisposedException>(() => buffer.VectorMin());
        Assert.Throws<ObjectDisposedException>(() => buffer.VectorMax());
        Assert.Throws<ObjectDisposedException>(() => buffer.VectorAllLessThan(1));
        Assert.Throws<ObjectDisposedException>(() => default(FixedBuffer<int>).VectorSum());

        Assert.Throws<ObjectDisposedException>(() => safe.VectorFill(1));
        Assert.Throws<ObjectDisposedException>(() => safe.VectorMultiply(1));
        Assert.Throws<ObjectDisposedException>(() => safe.VectorAdd(1));
        Assert.Throws<ObjectDisposedException>(() => safe.VectorSum());
        Assert.Throws<ObjectDisposedException>(() => safe.VectorMin());
        Assert.Throws<ObjectDisposedException>(() => safe.VectorMax());
        Assert.Throws<ObjectDisposedException>(() => safe.VectorAllLessThan(1));

        Assert.Throws<ObjectDisposedException>(() => huge.VectorFill(1));
        Assert.Throws<ObjectDisposedException>(() => huge.VectorMultiply(1));
        Assert.Throws<ObjectDisposedException>(() => huge.VectorAdd(1));
        Assert.Throws<ObjectDisposedException>(() => huge.VectorSum());
        Assert.Throws<ObjectDisposedException>(() => huge.VectorMin());
        Assert.Throws<ObjectDisposedException>(() => huge.VectorMax());
        Assert.Throws<ObjectDisposedException>(() => huge.VectorAllLessThan(1));
        Assert.Throws<ObjectDisposedException>(() => huge.ParallelVectorFill(1));
        Assert.Throws<ObjectDisposedException>(() => huge.ParallelVectorMultiply(1));
        Assert.Throws<ObjectDisposedException>(() => huge.ParallelVectorAdd(1));
        Assert.Throws<ObjectDisposedException>(() => huge.ParallelVectorSum());
        Assert.Throws<ObjectDisposedException>(() => huge.ParallelVectorMin());
        Assert.Throws<ObjectDisposedException>(() => huge.ParallelVectorMax());
    }

    [Fact]
    public void Null_arrays_are_rejected()
    {
        Assert.Throws<ArgumentNullException>(() => ((SafeArray<int>)null!).VectorSum());
        Assert.Throws<ArgumentNullException>(() => ((HugeArray<int>)null!).VectorFill(1));
        Assert.Throws<ArgumentNullException>(() => ((HugeArray<int>)null!).ParallelVectorSum());
    }

    [Fact]
    public void Operations_hold_the_structure_acquired_only_while_they_run()
    {
        var buffer = new FixedBuffer<int>([1, 2, 3]);
        buffer.Acquire();
        Assert.Equal(6, buffer.VectorSum());
        Assert.Equal(1, buffer.AcquireCount);
        buffer.Release();
        buffer.VectorMultiply(2);
        Assert.Equal(0, buffer.AcquireCount);
        buffer.Free();
    }

    private static void CheckAll<T>()
        where T : unmanaged, INumber<T>, IMinMaxValue<T>
    {
        var random = new Random(typeof(T).Name.Length);
        foreach (int length in Lengths)
        {
            T[] values = Enumerable.Range(0, length).Select(_ => RandomValue<T>(random)).ToArray();
            T factor = RandomValue<T>(random);
            T addend = RandomValue<T>(random);

            var fixedBuffer = new FixedBuffer<T>(values);
            using var safeArray = new SafeArray<T>(values);
            using var hugeArray = new HugeArray<T>(length);
            hugeArray.CopyFrom(values, 0);

            CheckReductions(values, fixedBuffer.VectorSum(), fixedBuffer.VectorMin(), fixedBuffer.VectorMax());
            CheckReductions(values, safeArray.VectorSum(), safeArray.VectorMin(), safeArray.VectorMax());
            CheckReductions(values, hugeArray.VectorSum(), hugeArray.VectorMin(), hugeArray.VectorMax());
            CheckReductions(values, hugeArray.ParallelVectorSum(), hugeArray.ParallelVectorMin(), hugeArray.ParallelVectorMax());
            CheckAllLessThan(values, random, b => fixedBuffer.VectorAllLessThan(b), safeArray.VectorAllLessThan, hugeArray.VectorAllLessThan);

            // The last element is in the tail for most lengths: a maximum there must be seen.
            bool noMaxValue = Array.IndexOf(values, T.MaxValue) < 0;
            Assert.Equal(noMaxValue, fixedBuffer.VectorAllLessThan(T.MaxValue));
            fixedBuffer[length - 1] = T.MaxValue;
            safeArray[length - 1] = T.MaxValue;
            hugeArray[length - 1] = T.MaxValue;
            Assert.False(fixedBuffer.VectorAllLessThan(T.MaxValue));
            Assert.False(safeArray.VectorAllLessThan(T.MaxValue));
            Assert.False(hugeArray.VectorAllLessThan(T.MaxValue));
            fixedBuffer[length - 1] = values[length - 1];
            safeArray[length - 1] = values[length - 1];
            hugeArray[length - 1] = values[length - 1];

            T[] expected = values.Select(v => (v * factor) + addend).ToArray();
            fixedBuffer.VectorMultiply(factor);
            fixedBuffer.VectorAdd(addend);
            safeArray.VectorMultiply(factor);
            safeArray.VectorAdd(addend);
            hugeArray.VectorMultiply(factor);
            hugeArray.VectorAdd(addend);
            // Element-wise multiply and add round once per operation, exactly as the scalar loop does: exact equality.
            Assert.Equal(expected, fixedBuffer.ToArray());
            Assert.Equal(expected, safeArray.ToArray());
            T[] fromHuge = new T[length];
            hugeArray.CopyTo(fromHuge, 0);
            Assert.Equal(expected, fromHuge);

            fixedBuffer.VectorFill(factor);
            safeArray.VectorFill(factor);
            hugeArray.VectorFill(factor);
            Assert.All(fixedBuffer.ToArray(), v => Assert.Equal(factor, v));
            Assert.All(safeArray.ToArray(), v => Assert.Equal(factor, v));
            hugeArray.CopyTo(fromHuge, 0);
            Assert.All(fromHuge, v => Assert.Equal(factor, v));
            fixedBuffer.Free();
        }
    }

    private static void CheckReductions<T>(T[] values, T sum, T min, T max)
        where T : unmanaged, INumber<T>
    {
        if (typeof(T) == typeof(float) || typeof(T) == typeof(double))
        {
            AssertSumWithinBound(values, sum);
        }
        else
        {
            // Integer addition wraps exactly in any order.
            Assert.Equal(ScalarSum<T>(values), sum);
        }

        T expectedMin = values[0];
        T expectedMax = values[0];
        foreach (T value in values)
        {
            expectedMin = value < expectedMin ? value : expectedMin;
            expectedMax = value > expectedMax ? value : expectedMax;
        }

        Assert.Equal(expectedMin, min);
        Assert.Equal(expectedMax, max);
    }

    /// <summary>
    /// A floating-point sum of n values in any order differs from the exact sum by at most
    /// γ(n)·Σ|x|, γ(n) = nε/(1−nε) (Higham, Accuracy and Stability, 4.2), ε the unit roundoff
    /// (2^-24 float, 2^-53 double). The reference is a scalar sum in double, itself within
    /// γ_double(n)·Σ|x| of the exact sum, so the two differ by at most the sum of both bounds.
    /// </summary>
    private static void AssertSumWithinBound<T>(T[] values, T actual)
        where T : INumber<T>
    {
        double reference = 0;
        double absoluteSum = 0;
        foreach (T value in values)
        {
            double v = double.CreateChecked(value);
            reference += v;
            absoluteSum += Math.Abs(v);
        }

        double unitRoundoff = typeof(T) == typeof(float) ? Math.ScaleB(1, -24) : Math.ScaleB(1, -53);
        double bound = (Gamma(values.Length, unitRoundoff) + Gamma(values.Length, Math.ScaleB(1, -53))) * absoluteSum;
        double error = Math.Abs(double.CreateChecked(actual) - reference);
        Assert.True(error <= bound, $"Sum of {values.Length} {typeof(T).Name}: expected {reference:R} ± {bound:R}, got {actual} (off by {error:R}).");
    }

    private static double Gamma(int n, double unitRoundoff)
    {
        double nu = n * unitRoundoff;
        Assert.True(nu < 1);
        return nu / (1 - nu);
    }

    /// <summary>
    /// "All less than" against a scalar loop, for bounds at and around the extremes, the tail, and
    /// random elements of the array.
    /// </summary>
    private static void CheckAllLessThan<T>(T[] values, Random random, params Func<T, bool>[] implementations)
        where T : unmanaged, INumber<T>, IMinMaxValue<T>
    {
        T max = values.Max()!;
        T min = values.Min()!;
        var bounds = new List<T> { max, min, T.MaxValue, T.MinValue, values[^1], values[0], values[random.Next(values.Length)], values[random.Next(values.Length)] };
        if (max != T.MaxValue)
        {
            bounds.Add(max + T.One);
        }

        if (typeof(T) == typeof(float))
        {
            bounds.Add(T.CreateChecked(MathF.BitIncrement(float.CreateChecked(max))));
        }
        else if (typeof(T) == typeof(double))
        {
            bounds.Add(T.CreateChecked(Math.BitIncrement(double.CreateChecked(max))));
        }

        foreach (T bound in bounds)
        {
            bool expected = true;
            foreach (T value in values)
            {
                expected &= value < bound;
            }

            foreach (var allLessThan in implementations)
            {
                Assert.True(expected == allLessThan(bound), $"AllLessThan({bound}) over {values.Length} {typeof(T).Name}: expected {expected}.");
            }
        }
    }

    private static T ScalarSum<T>(T[] values)
        where T : INumber<T>
    {
        T sum = T.Zero;
        foreach (T value in values)
        {
            sum += value;
        }

        return sum;
    }

    private static T RandomValue<T>(Random random)
        where T : INumber<T>
    {
        // Integers: the full range, so products and sums overflow and must wrap. Floats: moderate values.
        if (typeof(T) == typeof(float) || typeof(T) == typeof(double))
        {
            return T.CreateChecked((random.NextDouble() * 2000) - 1000);
        }

        return T.CreateTruncating(random.NextInt64(long.MinValue, long.MaxValue));
    }
}
