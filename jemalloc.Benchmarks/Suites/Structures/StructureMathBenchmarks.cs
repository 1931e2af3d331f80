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
/// <para>
/// Multiplication is in place and repeated by every operation: integers wrap around and floating
/// point values saturate at infinity, both deterministically, so the check after the run recomputes
/// the value every element must hold from the number of operations and compares every element.
/// </para>
/// <para>
/// The sums add ones, so every partial sum is an integer. Integer sums wrap the same way in any
/// order and are compared exactly. A floating-point sum is exact in any order while the total stays
/// within the format's integers (2^24 for <see cref="float"/>, 2^53 for <see cref="double"/>); for
/// more <see cref="float"/> elements than that, only every k-th element is one (the rest zero, the
/// same work for the adder) so that the total stays 2^24 at most and the check can still demand the
/// exact sum. The check after a sum also compares every element with its input value.
/// </para>
/// </remarks>
[ElementRows]
public abstract class StructureMathBenchmarks<T> where T : unmanaged, INumber<T>
{
    private T[]? _managed;
    private long _multiplications;
    private T _lastSum;
    private bool _summing;

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
    [GlobalSetup(Targets = [nameof(MultiplyManagedTensor), nameof(MultiplyManagedLoop)])]
    public void SetupManaged()
    {
        _managed = new T[ManagedLength];
        _managed.AsSpan().Fill(T.One);
        _multiplications = 0;
        _summing = false;
    }

    /// <summary>Creates the managed array holding the sum's input.</summary>
    [GlobalSetup(Target = nameof(SumManagedTensor))]
    public void SetupManagedSum()
    {
        _managed = new T[ManagedLength];
        _summing = true;
        WriteSumInput(_managed, 0, ManagedLength);
        _multiplications = 0;
    }

    /// <summary>Multiplies the managed array in place with <see cref="TensorPrimitives"/>.</summary>
    [Benchmark(Baseline = true, Description = "Managed array: TensorPrimitives.Multiply")]
    [BenchmarkCategory(Categories.Math)]
    [ManagedArrayRow]
    public void MultiplyManagedTensor()
    {
        TensorPrimitives.Multiply(Managed, Factor, Managed);
        _multiplications++;
    }

    /// <summary>Multiplies the managed array in place element by element (what the 2018 jembench compared against).</summary>
    [Benchmark(Description = "Managed array: element loop")]
    [BenchmarkCategory(Categories.Math)]
    [ManagedArrayRow]
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
    [ManagedArrayRow]
    public T SumManagedTensor() => _lastSum = TensorPrimitives.Sum<T>(Managed);

    /// <summary>Checks and drops the managed array.</summary>
    [GlobalCleanup(Targets = [nameof(MultiplyManagedTensor), nameof(MultiplyManagedLoop), nameof(SumManagedTensor)])]
    public void CleanupManaged()
    {
        Check("managed array", visit => visit(Managed, 0), ManagedLength);
        _managed = null;
        StructureBenchmarksCollect();
    }

    /// <summary>Multiplies the native structure in place with its SIMD method.</summary>
    public abstract void MultiplyNative();

    /// <summary>Sums the native structure with its SIMD method.</summary>
    public abstract T SumNative();

    /// <summary>Creates the native structure, all ones.</summary>
    [GlobalSetup(Target = nameof(MultiplyNative))]
    public void SetupNative()
    {
        AllocateNative();
        _multiplications = 0;
        _summing = false;
    }

    /// <summary>Creates the native structure holding the sum's input.</summary>
    [GlobalSetup(Target = nameof(SumNative))]
    public void SetupNativeSum()
    {
        AllocateNative();
        _summing = true;
        ForEachNativeChunk((chunk, start) => WriteSumInput(chunk, start, Parameter));
        _multiplications = 0;
    }

    /// <summary>Checks every element (and the sum) and frees the native structure.</summary>
    [GlobalCleanup(Targets = [nameof(MultiplyNative), nameof(SumNative)])]
    public void CleanupNative()
    {
        try
        {
            Check(StructureName, ForEachNativeChunk, Parameter);
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

    /// <summary>
    /// Calls <paramref name="visit"/> for every chunk of the structure's elements in order, under a
    /// lease of the structure.
    /// </summary>
    protected abstract void ForEachNativeChunk(ChunkVisitor<T> visit);

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

    /// <summary>
    /// Every how many elements the sum's input holds a one (the others zero): 1, unless more
    /// <see cref="float"/> ones than 2^24 would make the total inexact.
    /// </summary>
    private static long SumStride(long length) =>
        typeof(T) == typeof(float) && length > (1L << 24) ? (length + (1L << 24) - 1) >> 24 : 1;

    private static void WriteSumInput(Span<T> chunk, long start, long length)
    {
        long stride = SumStride(length);
        if (stride == 1)
        {
            chunk.Fill(T.One);
            return;
        }

        for (int i = 0; i < chunk.Length; i++)
        {
            chunk[i] = (start + i) % stride == 0 ? T.One : T.Zero;
        }
    }

    private static bool HoldsSumInput(Span<T> chunk, long start, long length)
    {
        long stride = SumStride(length);
        if (stride == 1)
        {
            return !chunk.ContainsAnyExcept(T.One);
        }

        for (int i = 0; i < chunk.Length; i++)
        {
            if (chunk[i] != ((start + i) % stride == 0 ? T.One : T.Zero))
            {
                return false;
            }
        }

        return true;
    }

    private void Check(string where, Action<ChunkVisitor<T>> forEachChunk, long length)
    {
        string name = $"{StructureName} math: {where} [{Parameter}]";
        bool right = true;
        if (!_summing)
        {
            T expected = ExpectedProduct();
            forEachChunk((chunk, _) =>
            {
                BrokenResultSwitch.Corrupt(chunk);
                right &= !chunk.ContainsAnyExcept(expected);
            });
            ResultChecks.Check(name, right, $"every element equals 1 x 3^{_multiplications} after {_multiplications} multiplications");
            return;
        }

        forEachChunk((chunk, start) => right &= HoldsSumInput(chunk, start, length));
        ResultChecks.Check(name, right, "every element still holds the sum's input");
        long stride = SumStride(length);
        long ones = (length + stride - 1) / stride;
        ResultChecks.SumWithinBound(name, ones, BrokenResultSwitch.Corrupt(_lastSum), length, ones,
            exactInAnyOrder: typeof(T) != typeof(float) || ones <= (1L << 24));
    }

    private static void StructureBenchmarksCollect() => MallocBenchmarks<byte>.Collect();
}
