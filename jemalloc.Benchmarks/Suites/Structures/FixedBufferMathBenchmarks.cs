using System.Numerics;
using BenchmarkDotNet.Attributes;
using jemalloc.Benchmarks.Infrastructure;

namespace jemalloc.Benchmarks.Suites.Structures;

/// <summary>The <c>buffer</c> suite's math benchmarks: SIMD operations on <see cref="FixedBuffer{T}"/> against managed arrays.</summary>
/// <typeparam name="T">A numeric element type.</typeparam>
public class FixedBufferMathBenchmarks<T> : StructureMathBenchmarks<T> where T : unmanaged, INumber<T>
{
    private FixedBuffer<T> _buffer;

    /// <inheritdoc/>
    protected override string StructureName => $"FixedBuffer<{typeof(T).Name}>";

    /// <summary>Multiplies the FixedBuffer in place with <c>VectorMultiply</c>.</summary>
    [Benchmark(Description = "FixedBuffer<T>.VectorMultiply")]
    [BenchmarkCategory(Categories.Math)]
    public override void MultiplyNative()
    {
        _buffer.VectorMultiply(Factor);
        CountMultiplication();
    }

    /// <summary>Sums the FixedBuffer with <c>VectorSum</c>.</summary>
    [Benchmark(Description = "FixedBuffer<T>.VectorSum")]
    [BenchmarkCategory(Categories.Math)]
    public override T SumNative() => RecordSum(_buffer.VectorSum());

    /// <inheritdoc/>
    protected override void AllocateNative()
    {
        _buffer = new FixedBuffer<T>(checked((int)Parameter));
        _buffer.Fill(T.One);
    }

    /// <inheritdoc/>
    protected override void FreeNative()
    {
        if (_buffer.IsValid)
        {
            _buffer.Free();
        }

        _buffer = default;
    }

    /// <inheritdoc/>
    protected override void ForEachNativeChunk(ChunkVisitor<T> visit)
    {
        if (_buffer.IsValid)
        {
            using MemoryLease<T> lease = _buffer.Lease();
            visit(lease.Span, 0);
        }
    }
}
