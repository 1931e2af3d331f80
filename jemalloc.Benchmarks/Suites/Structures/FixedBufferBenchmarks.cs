using BenchmarkDotNet.Attributes;
using jemalloc.Benchmarks.Infrastructure;

namespace jemalloc.Benchmarks.Suites.Structures;

/// <summary>The <c>buffer</c> suite's fill and create benchmarks: <see cref="FixedBuffer{T}"/> against managed arrays.</summary>
/// <typeparam name="T">The element type.</typeparam>
public unsafe class FixedBufferBenchmarks<T> : StructureBenchmarks<T> where T : unmanaged, IEquatable<T>
{
    private FixedBuffer<T> _buffer;

    /// <inheritdoc/>
    protected override string StructureName => $"FixedBuffer<{typeof(T).Name}>";

    /// <summary>Fills the FixedBuffer with <see cref="FixedBuffer{T}.Fill"/>.</summary>
    [Benchmark(Description = "FixedBuffer<T>.Fill")]
    [BenchmarkCategory(Categories.Fill)]
    public override void FillNative() => _buffer.Fill(Value);

    /// <summary>Frees the previous operation's FixedBuffer, creates one and fills it.</summary>
    [Benchmark(Description = "new FixedBuffer<T> + Fill (4 KiB pages)")]
    [BenchmarkCategory(Categories.Create, Categories.Fill)]
    public override void CreateNative() => CreateAndFill(AllocationOptions.Default);

    /// <summary>As the 4 KiB-page create, on transparent huge pages.</summary>
    [Benchmark(Description = "new FixedBuffer<T> + Fill (huge pages)")]
    [BenchmarkCategory(Categories.Create, Categories.Fill)]
    public override void CreateNativeHugePages() => CreateAndFill(AllocationOptions.WithHugePages);

    /// <summary>Creates a FixedBuffer with every element set by the constructor (no zeroing pass), after freeing the previous operation's.</summary>
    [Benchmark(Description = "new FixedBuffer<T>(n, value) (4 KiB pages)")]
    [BenchmarkCategory(Categories.Create, Categories.Fill)]
    public override void CreateNativeWithValue() => CreateWithValue(AllocationOptions.Default);

    /// <summary>Creates a FixedBuffer on transparent huge pages with every element set by the constructor, after freeing the previous operation's.</summary>
    [Benchmark(Description = "new FixedBuffer<T>(n, value) (huge pages)")]
    [BenchmarkCategory(Categories.Create, Categories.Fill)]
    public override void CreateNativeWithValueHugePages() => CreateWithValue(AllocationOptions.WithHugePages);

    /// <inheritdoc/>
    protected override void* NativePointer => (void*)_buffer.Pointer;

    /// <inheritdoc/>
    protected override void AllocateNative(bool hugePages) =>
        _buffer = new FixedBuffer<T>(checked((int)Parameter), hugePages ? AllocationOptions.WithHugePages : AllocationOptions.Default);

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

    private void CreateAndFill(AllocationOptions options)
    {
        // The previous operation's structure, kept for the check after the last timed operation.
        FreeNative();
        _buffer = new FixedBuffer<T>(checked((int)Parameter), options);
        _buffer.Fill(Value);
    }

    private void CreateWithValue(AllocationOptions options)
    {
        FreeNative();
        _buffer = new FixedBuffer<T>(checked((int)Parameter), Value, options);
    }
}
