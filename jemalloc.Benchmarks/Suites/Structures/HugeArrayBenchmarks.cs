using System.Diagnostics.CodeAnalysis;
using BenchmarkDotNet.Attributes;
using jemalloc.Benchmarks.Infrastructure;

namespace jemalloc.Benchmarks.Suites.Structures;

/// <summary>
/// The <c>hugearray</c> suite's fill and create benchmarks: <see cref="HugeArray{T}"/> of any length
/// against the largest managed array .NET allows (<see cref="Array.MaxLength"/> elements), or one of
/// the same length when that is smaller.
/// </summary>
/// <typeparam name="T">The element type.</typeparam>
[SuppressMessage("Design", "CA1001:Types that own disposable fields should be disposable", Justification = "BenchmarkDotNet frees benchmark state in [GlobalCleanup], which disposes it.")]
public unsafe class HugeArrayBenchmarks<T> : StructureBenchmarks<T> where T : unmanaged, IEquatable<T>
{
    private HugeArray<T>? _array;

    /// <inheritdoc/>
    protected override int ManagedLength => (int)Math.Min(Parameter, Array.MaxLength);

    /// <inheritdoc/>
    protected override string StructureName => $"HugeArray<{typeof(T).Name}>";

    /// <summary>Fills the HugeArray with <see cref="NativeBuffer{T}.Fill"/>.</summary>
    [Benchmark(Description = "HugeArray<T>.Fill")]
    [BenchmarkCategory(Categories.Fill)]
    public override void FillNative() => _array!.Fill(Value);

    /// <summary>Frees the previous operation's HugeArray, creates one and fills it.</summary>
    [Benchmark(Description = "new HugeArray<T> + Fill (4 KiB pages)")]
    [BenchmarkCategory(Categories.Create, Categories.Fill)]
    public override void CreateNative() => CreateAndFill(AllocationOptions.Default);

    /// <summary>As the 4 KiB-page create, on transparent huge pages.</summary>
    [Benchmark(Description = "new HugeArray<T> + Fill (huge pages)")]
    [BenchmarkCategory(Categories.Create, Categories.Fill)]
    public override void CreateNativeHugePages() => CreateAndFill(AllocationOptions.WithHugePages);

    /// <summary>Creates a HugeArray with every element set by the constructor (no zeroing pass), after freeing the previous operation's.</summary>
    [Benchmark(Description = "new HugeArray<T>(n, value) (4 KiB pages)")]
    [BenchmarkCategory(Categories.Create, Categories.Fill)]
    public override void CreateNativeWithValue() => CreateWithValue(AllocationOptions.Default);

    /// <summary>Creates a HugeArray on transparent huge pages with every element set by the constructor, after freeing the previous operation's.</summary>
    [Benchmark(Description = "new HugeArray<T>(n, value) (huge pages)")]
    [BenchmarkCategory(Categories.Create, Categories.Fill)]
    public override void CreateNativeWithValueHugePages() => CreateWithValue(AllocationOptions.WithHugePages);

    /// <inheritdoc/>
    protected override void* NativePointer => (void*)_array!.Pointer;

    /// <inheritdoc/>
    protected override void AllocateNative(bool hugePages) =>
        _array = new HugeArray<T>(Parameter, hugePages ? AllocationOptions.WithHugePages : AllocationOptions.Default);

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

    private void CreateAndFill(AllocationOptions options)
    {
        // The previous operation's structure, kept for the check after the last timed operation.
        FreeNative();
        _array = new HugeArray<T>(Parameter, options);
        _array.Fill(Value);
    }

    private void CreateWithValue(AllocationOptions options)
    {
        FreeNative();
        _array = new HugeArray<T>(Parameter, Value, options);
    }
}
