using System.Diagnostics.CodeAnalysis;
using System.Numerics;
using System.Numerics.Tensors;
using BenchmarkDotNet.Attributes;
using jemalloc.Benchmarks.Infrastructure;

namespace jemalloc.Benchmarks.Suites.Structures;

/// <summary>
/// The <c>hugearray</c> suite's math benchmarks: SIMD operations on <see cref="HugeArray{T}"/>,
/// single- and multi-threaded, against the largest managed array .NET allows.
/// </summary>
/// <typeparam name="T">A numeric element type.</typeparam>
[SuppressMessage("Design", "CA1001:Types that own disposable fields should be disposable", Justification = "BenchmarkDotNet frees benchmark state in [GlobalCleanup], which disposes it.")]
public class HugeArrayMathBenchmarks<T> : StructureMathBenchmarks<T> where T : unmanaged, INumber<T>
{
    private HugeArray<T>? _array;

    /// <inheritdoc/>
    protected override int ManagedLength => (int)Math.Min(Parameter, Array.MaxLength);

    /// <inheritdoc/>
    protected override string StructureName => $"HugeArray<{typeof(T).Name}>";

    /// <summary>Multiplies the HugeArray in place with <c>VectorMultiply</c> on one thread.</summary>
    [Benchmark(Description = "HugeArray<T>.VectorMultiply")]
    [BenchmarkCategory(Categories.Math)]
    public override void MultiplyNative()
    {
        _array!.VectorMultiply(Factor);
        CountMultiplication();
    }

    /// <summary>Multiplies the HugeArray in place with <c>ParallelVectorMultiply</c> on all cores.</summary>
    [Benchmark(Description = "HugeArray<T>.ParallelVectorMultiply")]
    [BenchmarkCategory(Categories.Math)]
    public void ParallelMultiplyNative()
    {
        _array!.ParallelVectorMultiply(Factor);
        CountMultiplication();
    }

    /// <summary>Multiplies the managed array in place with <see cref="TensorPrimitives"/>, split over all cores.</summary>
    [Benchmark(Description = "Managed array: parallel TensorPrimitives.Multiply")]
    [BenchmarkCategory(Categories.Math)]
    [ManagedArrayRow]
    public void ParallelMultiplyManaged()
    {
        T[] array = Managed;
        int partitions = Environment.ProcessorCount;
        long partitionLength = (array.Length + partitions - 1) / partitions;
        Parallel.For(0, partitions, p =>
        {
            int start = (int)Math.Min(array.Length, p * partitionLength);
            int end = (int)Math.Min(array.Length, start + partitionLength);
            Span<T> part = array.AsSpan(start, end - start);
            TensorPrimitives.Multiply(part, Factor, part);
        });
        CountMultiplication();
    }

    /// <summary>Sums the HugeArray with <c>VectorSum</c> on one thread.</summary>
    [Benchmark(Description = "HugeArray<T>.VectorSum")]
    [BenchmarkCategory(Categories.Math)]
    public override T SumNative() => RecordSum(_array!.VectorSum());

    /// <summary>Sums the HugeArray with <c>ParallelVectorSum</c> on all cores.</summary>
    [Benchmark(Description = "HugeArray<T>.ParallelVectorSum")]
    [BenchmarkCategory(Categories.Math)]
    public T ParallelSumNative() => RecordSum(_array!.ParallelVectorSum());

    /// <summary>Creates the managed array for the parallel managed benchmark.</summary>
    [GlobalSetup(Target = nameof(ParallelMultiplyManaged))]
    public void SetupParallelManaged() => SetupManaged();

    /// <summary>Checks and drops the managed array.</summary>
    [GlobalCleanup(Target = nameof(ParallelMultiplyManaged))]
    public void CleanupParallelManaged() => CleanupManaged();

    /// <summary>Creates the HugeArray for the parallel multiplication.</summary>
    [GlobalSetup(Target = nameof(ParallelMultiplyNative))]
    public void SetupParallelNative() => SetupNative();

    /// <summary>Creates the HugeArray for the parallel sum.</summary>
    [GlobalSetup(Target = nameof(ParallelSumNative))]
    public void SetupParallelNativeSum() => SetupNativeSum();

    /// <summary>Checks and frees the HugeArray.</summary>
    [GlobalCleanup(Targets = [nameof(ParallelMultiplyNative), nameof(ParallelSumNative)])]
    public void CleanupParallelNative() => CleanupNative();

    /// <inheritdoc/>
    protected override void AllocateNative()
    {
        _array = new HugeArray<T>(Parameter);
        _array.ParallelVectorFill(T.One);
    }

    /// <inheritdoc/>
    protected override void FreeNative()
    {
        _array?.Dispose();
        _array = null;
    }

    /// <inheritdoc/>
    protected override void ForEachNativeChunk(ChunkVisitor<T> visit)
    {
        if (_array is null)
        {
            return;
        }

        using MemoryLease<T> lease = _array.Lease();
        long start = 0;
        foreach (Span<T> chunk in lease.GetChunks())
        {
            visit(chunk, start);
            start += chunk.Length;
        }
    }
}
