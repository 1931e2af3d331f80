using System.Diagnostics.CodeAnalysis;
using System.Numerics.Tensors;
using BenchmarkDotNet.Attributes;

namespace jemalloc.Benchmarks.Micro;

/// <summary>
/// In-place multiplication of 10M <see cref="ulong"/>s by a scalar. The baseline is the best
/// single-threaded managed SIMD code: <see cref="TensorPrimitives"/> over a <c>ulong[]</c>.
/// Goal: the native structures' <c>VectorMultiply</c> no slower.
/// </summary>
[MemoryDiagnoser]
[SuppressMessage("Design", "CA1001:Types that own disposable fields should be disposable", Justification = "BenchmarkDotNet frees them in [GlobalCleanup].")]
public class VectorMultiplyBenchmarks
{
    private ulong[] _managed = null!;
    private FixedBuffer<ulong> _fixedBuffer;
    private SafeArray<ulong> _safeArray = null!;
    private HugeArray<ulong> _hugeArray = null!;

    /// <summary>The number of elements.</summary>
    [Params(10_000_000)]
    public int Length { get; set; }

    /// <summary>Allocates and fills the arrays.</summary>
    [GlobalSetup]
    public void Setup()
    {
        _managed = new ulong[Length];
        _fixedBuffer = new FixedBuffer<ulong>(Length);
        _safeArray = new SafeArray<ulong>(Length);
        _hugeArray = new HugeArray<ulong>(Length);
        _managed.AsSpan().Fill(3);
        _fixedBuffer.Fill(3);
        _safeArray.Fill(3);
        _hugeArray.Fill(3);
    }

    /// <summary>Frees the native arrays.</summary>
    [GlobalCleanup]
    public void Cleanup()
    {
        _fixedBuffer.Free();
        _safeArray.Dispose();
        _hugeArray.Dispose();
    }

    /// <summary>TensorPrimitives.Multiply over a managed array.</summary>
    [Benchmark(Baseline = true, Description = "TensorPrimitives.Multiply on ulong[]")]
    public void ManagedTensorPrimitives() => TensorPrimitives.Multiply(_managed, 3UL, _managed);

    /// <summary>A plain scalar loop over a managed array, for reference.</summary>
    [Benchmark(Description = "Scalar loop on ulong[]")]
    public void ManagedScalarLoop()
    {
        ulong[] values = _managed;
        for (int i = 0; i < values.Length; i++)
        {
            values[i] *= 3;
        }
    }

    /// <summary>FixedBuffer VectorMultiply.</summary>
    [Benchmark(Description = "FixedBuffer<ulong>.VectorMultiply")]
    public void FixedBufferVectorMultiply() => _fixedBuffer.VectorMultiply(3UL);

    /// <summary>SafeArray VectorMultiply.</summary>
    [Benchmark(Description = "SafeArray<ulong>.VectorMultiply")]
    public void SafeArrayVectorMultiply() => _safeArray.VectorMultiply(3UL);

    /// <summary>HugeArray VectorMultiply (one thread).</summary>
    [Benchmark(Description = "HugeArray<ulong>.VectorMultiply")]
    public void HugeArrayVectorMultiply() => _hugeArray.VectorMultiply(3UL);

    /// <summary>HugeArray ParallelVectorMultiply (every core).</summary>
    [Benchmark(Description = "HugeArray<ulong>.ParallelVectorMultiply")]
    public void HugeArrayParallelVectorMultiply() => _hugeArray.ParallelVectorMultiply(3UL);
}
