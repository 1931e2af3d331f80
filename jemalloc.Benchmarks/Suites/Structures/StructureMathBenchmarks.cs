using System.Diagnostics.CodeAnalysis;
using System.Numerics;
using System.Numerics.Tensors;
using BenchmarkDotNet.Attributes;
using jemalloc.Benchmarks.Infrastructure;

namespace jemalloc.Benchmarks.Suites.Structures;

/// <summary>
/// Arithmetic over every element of a native structure of <typeparamref name="T"/> (the SIMD
/// <c>VectorMultiply</c> and <c>VectorSum</c>) against the best managed code
/// (<see cref="TensorPrimitives"/>) and the plain loop. The derived class supplies the native benchmarks.
/// </summary>
/// <typeparam name="T">A numeric element type.</typeparam>
/// <remarks>
/// Multiplication is in place and repeated by every operation: integers wrap around and floating
/// point values saturate at infinity, both deterministically, so the check after the run recomputes
/// the value every element must hold from the number of operations.
/// </remarks>
public abstract class StructureMathBenchmarks<T> where T : unmanaged, INumber<T>
{
    private T[]? _managed;
    private long _multiplications;
    private T _lastSum;

    /// <summary>The sizes given on the command line.</summary>
    [SuppressMessage("Design", "CA1000:Do not declare static members on generic types", Justification = "BenchmarkDotNet reads [ParamsSource] from the benchmark class itself.")]
    public static IEnumerable<long> Sizes => SuiteParameters.Sizes;

    /// <summary>The number of elements.</summary>
    [ParamsSource(nameof(Sizes))]
    public long Parameter { get; set; }

    /// <summary>The factor of every multiplication.</summary>
    protected static T Factor => T.CreateTruncating(3);

    /// <summary>The managed array's length: the parameter, or the largest array .NET allows if that is smaller.</summary>
    protected virtual int ManagedLength => checked((int)Parameter);

    /// <summary>The managed array, filled with one.</summary>
    protected T[] Managed => _managed!;

    /// <summary>The structure's name in messages.</summary>
    protected abstract string StructureName { get; }

    /// <summary>Creates the managed array, all ones.</summary>
    [GlobalSetup(Targets = [nameof(MultiplyManagedTensor), nameof(MultiplyManagedLoop), nameof(SumManagedTensor)])]
    public void SetupManaged()
    {
        _managed = new T[ManagedLength];
        _managed.AsSpan().Fill(T.One);
        _multiplications = 0;
    }

    /// <summary>Multiplies the managed array in place with <see cref="TensorPrimitives"/>.</summary>
    [Benchmark(Baseline = true, Description = "Managed array: TensorPrimitives.Multiply")]
    [BenchmarkCategory(Categories.Math)]
    public void MultiplyManagedTensor()
    {
        TensorPrimitives.Multiply(Managed, Factor, Managed);
        _multiplications++;
    }

    /// <summary>Multiplies the managed array in place element by element (what the 2018 jembench compared against).</summary>
    [Benchmark(Description = "Managed array: element loop")]
    [BenchmarkCategory(Categories.Math)]
    public void MultiplyManagedLoop()
    {
        T[] array = Managed;
        T factor = Factor;
        for (int i = 0; i < array.Length; i++)
        {
            array[i] *= factor;
        }

        _multiplications++;
    }

    /// <summary>Sums the managed array with <see cref="TensorPrimitives"/>.</summary>
    [Benchmark(Description = "Managed array: TensorPrimitives.Sum")]
    [BenchmarkCategory(Categories.Math)]
    public T SumManagedTensor() => _lastSum = TensorPrimitives.Sum<T>(Managed);

    /// <summary>Checks and drops the managed array.</summary>
    [GlobalCleanup(Targets = [nameof(MultiplyManagedTensor), nameof(MultiplyManagedLoop), nameof(SumManagedTensor)])]
    public void CleanupManaged()
    {
        CheckMultiplied("managed array", !Managed.AsSpan().ContainsAnyExcept(ExpectedProduct()));
        _managed = null;
        StructureBenchmarksCollect();
    }

    /// <summary>Multiplies the native structure in place with its SIMD method.</summary>
    public abstract void MultiplyNative();

    /// <summary>Sums the native structure with its SIMD method.</summary>
    public abstract T SumNative();

    /// <summary>Creates the native structure, all ones.</summary>
    [GlobalSetup(Targets = [nameof(MultiplyNative), nameof(SumNative)])]
    public void SetupNative()
    {
        AllocateNative();
        _multiplications = 0;
    }

    /// <summary>Checks and frees the native structure.</summary>
    [GlobalCleanup(Targets = [nameof(MultiplyNative), nameof(SumNative)])]
    public void CleanupNative()
    {
        try
        {
            CheckMultiplied(StructureName, NativeAllEqual(ExpectedProduct()));
        }
        finally
        {
            FreeNative();
            StructureBenchmarksCollect();
        }
    }

    /// <summary>Creates the structure of <see cref="Parameter"/> elements, all one.</summary>
    protected abstract void AllocateNative();

    /// <summary>Frees the structure.</summary>
    protected abstract void FreeNative();

    /// <summary>Whether every element of the structure equals <paramref name="value"/>.</summary>
    protected abstract bool NativeAllEqual(T value);

    /// <summary>Counts one in-place multiplication of the whole structure.</summary>
    protected void CountMultiplication() => _multiplications++;

    /// <summary>Records a sum, for the check after the run.</summary>
    protected T RecordSum(T sum) => _lastSum = sum;

    private T ExpectedProduct()
    {
        T value = T.One;
        for (long i = 0; i < _multiplications; i++)
        {
            value *= Factor;
        }

        return value;
    }

    private void CheckMultiplied(string where, bool allEqual)
    {
        string name = $"{StructureName} math: {where} [{Parameter}]";
        if (_multiplications > 0)
        {
            ResultChecks.Check(name, allEqual, $"every element equals 1 x 3^{_multiplications} after {_multiplications} multiplications");
        }
        else
        {
            // A sum benchmark: every element is still one, so the sum is the element count (wrapping for integers).
            ResultChecks.Check(name, allEqual, "the elements were left unchanged by summing");
            T expected = T.CreateTruncating(where == StructureName ? Parameter : ManagedLength);
            // Floating-point sums round: allow the textbook bound of n rounding errors (it grows past
            // 100% once the sum no longer has room for one more unit, which is the format's limit).
            double elements = double.CreateTruncating(expected);
            double unitRoundoff = typeof(T) == typeof(float) ? 1.0 / (1 << 24) : typeof(T) == typeof(double) ? 1.0 / (1L << 53) : 0;
            double tolerance = elements * Math.Min(1, elements * unitRoundoff);
            ResultChecks.Check(name, Math.Abs(double.CreateTruncating(_lastSum) - double.CreateTruncating(expected)) <= tolerance,
                $"the sum is {_lastSum}, expected {expected}");
        }
    }

    private static void StructureBenchmarksCollect() => MallocBenchmarks<byte>.Collect();
}
