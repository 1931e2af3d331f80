using System.Diagnostics.CodeAnalysis;
using System.Numerics;
using BenchmarkDotNet.Attributes;
using jemalloc.Benchmarks.Infrastructure;

namespace jemalloc.Benchmarks.Suites.Structures;

/// <summary>The <c>array</c> suite's math benchmarks: SIMD operations on <see cref="SafeArray{T}"/> against managed arrays.</summary>
/// <typeparam name="T">A numeric element type.</typeparam>
[SuppressMessage("Design", "CA1001:Types that own disposable fields should be disposable", Justification = "BenchmarkDotNet frees benchmark state in [GlobalCleanup], which disposes it.")]
public class SafeArrayMathBenchmarks<T> : StructureMathBenchmarks<T> where T : unmanaged, INumber<T>
{
    private SafeArray<T>? _array;

    /// <inheritdoc/>
    protected override string StructureName => $"SafeArray<{typeof(T).Name}>";

    /// <summary>Multiplies the SafeArray in place with <c>VectorMultiply</c>.</summary>
    [Benchmark(Description = "SafeArray<T>.VectorMultiply")]
    [BenchmarkCategory(Categories.Math)]
    public override void MultiplyNative()
    {
        _array!.VectorMultiply(Factor);
        CountMultiplication();
    }

    /// <summary>Sums the SafeArray with <c>VectorSum</c>.</summary>
    [Benchmark(Description = "SafeArray<T>.VectorSum")]
    [BenchmarkCategory(Categories.Math)]
    public override T SumNative() => RecordSum(_array!.VectorSum());

    /// <inheritdoc/>
    protected override void AllocateNative()
    {
        _array = new SafeArray<T>(checked((int)Parameter));
        _array.Fill(T.One);
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
        if (_array is not null)
        {
            using MemoryLease<T> lease = _array.Lease();
            visit(lease.Span, 0);
        }
    }
}
