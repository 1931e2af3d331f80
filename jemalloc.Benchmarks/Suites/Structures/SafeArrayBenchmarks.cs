using System.Diagnostics.CodeAnalysis;
using BenchmarkDotNet.Attributes;
using jemalloc.Benchmarks.Infrastructure;

namespace jemalloc.Benchmarks.Suites.Structures;

/// <summary>The <c>array</c> suite's fill and create benchmarks: <see cref="SafeArray{T}"/> against managed arrays.</summary>
/// <typeparam name="T">The element type.</typeparam>
[SuppressMessage("Design", "CA1001:Types that own disposable fields should be disposable", Justification = "BenchmarkDotNet frees benchmark state in [GlobalCleanup], which disposes it.")]
public unsafe class SafeArrayBenchmarks<T> : StructureBenchmarks<T> where T : unmanaged, IEquatable<T>
{
    private SafeArray<T>? _array;

    /// <inheritdoc/>
    protected override string StructureName => $"SafeArray<{typeof(T).Name}>";

    /// <summary>Fills the SafeArray with <see cref="NativeBuffer{T}.Fill"/>.</summary>
    [Benchmark(Description = "SafeArray<T>.Fill")]
    [BenchmarkCategory(Categories.Fill)]
    public override void FillNative() => _array!.Fill(Value);

    /// <summary>Frees the previous operation's SafeArray, creates one and fills it.</summary>
    [Benchmark(Description = "new SafeArray<T> + Fill (4 KiB pages)")]
    [BenchmarkCategory(Categories.Create, Categories.Fill)]
    public override void CreateNative() => CreateAndFill(AllocationOptions.Default);

    /// <summary>As the 4 KiB-page create, on transparent huge pages.</summary>
    [Benchmark(Description = "new SafeArray<T> + Fill (huge pages)")]
    [BenchmarkCategory(Categories.Create, Categories.Fill)]
    public override void CreateNativeHugePages() => CreateAndFill(AllocationOptions.WithHugePages);

    /// <summary>Creates a SafeArray with every element set by the constructor (no zeroing pass), after freeing the previous operation's.</summary>
    [Benchmark(Description = "new SafeArray<T>(n, value) (4 KiB pages)")]
    [BenchmarkCategory(Categories.Create, Categories.Fill)]
    public override void CreateNativeWithValue() => CreateWithValue(AllocationOptions.Default);

    /// <summary>Creates a SafeArray on transparent huge pages with every element set by the constructor, after freeing the previous operation's.</summary>
    [Benchmark(Description = "new SafeArray<T>(n, value) (huge pages)")]
    [BenchmarkCategory(Categories.Create, Categories.Fill)]
    public override void CreateNativeWithValueHugePages() => CreateWithValue(AllocationOptions.WithHugePages);

    /// <inheritdoc/>
    protected override void* NativePointer => (void*)_array!.Pointer;

    /// <inheritdoc/>
    protected override void AllocateNative(bool hugePages) =>
        _array = new SafeArray<T>(checked((int)Parameter), hugePages ? AllocationOptions.WithHugePages : AllocationOptions.Default);

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

    private void CreateAndFill(AllocationOptions options)
    {
        // The previous operation's structure, kept for the check after the last timed operation.
        FreeNative();
        _array = new SafeArray<T>(checked((int)Parameter), options);
        _array.Fill(Value);
    }

    private void CreateWithValue(AllocationOptions options)
    {
        FreeNative();
        _array = new SafeArray<T>(checked((int)Parameter), Value, options);
    }
}
