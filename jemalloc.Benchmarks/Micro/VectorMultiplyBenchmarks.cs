using System.Diagnostics.CodeAnalysis;
using System.Numerics.Tensors;
using BenchmarkDotNet.Attributes;
using jemalloc.Benchmarks.Infrastructure;

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

    /// <summary>Checks the managed rows: element i is 3i after one operation on 0, 1, 2, ...</summary>
    [GlobalCleanup(Targets = [nameof(ManagedTensorPrimitives), nameof(ManagedScalarLoop)])]
    public void CheckManaged()
    {
        try
        {
            CheckOneOperation("ulong[]", visit => visit(_managed, 0), ManagedTensorPrimitives, ManagedScalarLoop);
        }
        finally
        {
            FreeNative();
        }
    }

    /// <summary>Checks the FixedBuffer row: element i is 3i after one operation on 0, 1, 2, ...</summary>
    [GlobalCleanup(Target = nameof(FixedBufferVectorMultiply))]
    public void CheckFixedBuffer() => CheckNative("FixedBuffer<ulong>", () => _fixedBuffer.Lease(), FixedBufferVectorMultiply);

    /// <summary>Checks the SafeArray row: element i is 3i after one operation on 0, 1, 2, ...</summary>
    [GlobalCleanup(Target = nameof(SafeArrayVectorMultiply))]
    public void CheckSafeArray() => CheckNative("SafeArray<ulong>", () => _safeArray.Lease(), SafeArrayVectorMultiply);

    /// <summary>Checks the HugeArray rows: element i is 3i after one operation on 0, 1, 2, ...</summary>
    [GlobalCleanup(Targets = [nameof(HugeArrayVectorMultiply), nameof(HugeArrayParallelVectorMultiply)])]
    public void CheckHugeArray() => CheckNative("HugeArray<ulong>", () => _hugeArray.Lease(), HugeArrayVectorMultiply, HugeArrayParallelVectorMultiply);

    private void CheckNative(string structure, Func<MemoryLease<ulong>> lease, params Action[] operations)
    {
        try
        {
            CheckOneOperation(structure, visit =>
            {
                using MemoryLease<ulong> held = lease();
                long start = 0;
                foreach (Span<ulong> chunk in held.GetChunks())
                {
                    visit(chunk, start);
                    start += chunk.Length;
                }
            }, operations);
        }
        finally
        {
            FreeNative();
        }
    }

    /// <summary>For each operation: writes 0, 1, 2, ... into the elements, runs it once and checks that element i is 3i (wrapping).</summary>
    private void CheckOneOperation(string structure, Action<ChunkVisitor<ulong>> forEachChunk, params Action[] operations)
    {
        foreach (Action operation in operations)
        {
            forEachChunk((chunk, start) =>
            {
                for (int i = 0; i < chunk.Length; i++)
                {
                    chunk[i] = (ulong)(start + i);
                }
            });
            operation();
            bool right = true;
            long elements = 0;
            forEachChunk((chunk, start) =>
            {
                BrokenResultSwitch.Corrupt(chunk);
                for (int i = 0; i < chunk.Length; i++)
                {
                    right &= chunk[i] == unchecked((ulong)(start + i) * 3);
                }

                elements += chunk.Length;
            });
            ResultChecks.Check($"micro VectorMultiply [{Length}]: {structure}: {operation.Method.Name}", right && elements == Length,
                $"every one of the {Length:N0} elements i is 3i after one operation");
        }
    }

    private void FreeNative()
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
