namespace jemalloc.PerfCompare;

/// <summary>
/// One row of the comparison: what a worker runs under <see cref="Name"/>, and how its time per
/// operation is shown (per operation, per element, or per operation with the bytes it wrote per second).
/// </summary>
/// <param name="Name">The key a worker runs it by and <c>--only</c> picks it by.</param>
/// <param name="Title">What one operation is, for the table.</param>
/// <param name="ElementsPerOperation">The elements one operation goes through: the table shows ns per element when more than one.</param>
/// <param name="BytesPerOperation">The bytes one operation writes, for a GB/s figure; 0 for none.</param>
/// <param name="IsControl">No library code in its loop: its ratio shows the comparison's own noise, and it has no verdict.</param>
internal sealed record Measurement(string Name, string Title, long ElementsPerOperation, long BytesPerOperation, bool IsControl)
{
    /// <summary>Every measurement, in the order each round runs them.</summary>
    internal static IReadOnlyList<Measurement> All { get; } =
    [
        new("fixedbuffer", "new FixedBuffer<byte>(64) + read/write/read + Free()", 1, 0, false),
        new("safearray-sum", "SafeArray<int> indexer: sum of 1M elements", Workloads.ArrayLength, 0, false),
        new("safearray-write", "SafeArray<int> indexer: write of 1M elements", Workloads.ArrayLength, 0, false),
        new("pool", "JemMemoryPool: Rent(4096) + write/read + Dispose()", 1, 0, false),
        new("writer", "NativeBufferWriter<byte>: GetSpan/Advance 4 KiB to 64 MiB, Dispose()", 1, Workloads.WriterBytes, false),
        new("control", "control: Span<int> sum of the same 1M (no library code)", Workloads.ArrayLength, 0, true),
    ];

    /// <summary>The measurement named <paramref name="name"/>, or null.</summary>
    internal static Measurement? Find(string name) => All.FirstOrDefault(m => m.Name == name);

    /// <summary>The unit of <see cref="Scale"/>d times.</summary>
    internal string Unit => ElementsPerOperation > 1 ? "ns/element" : BytesPerOperation > 0 ? "ms/op" : "ns/op";

    /// <summary>A time per operation in ns, in this row's <see cref="Unit"/>.</summary>
    internal double Scale(double nanosecondsPerOperation) =>
        ElementsPerOperation > 1 ? nanosecondsPerOperation / ElementsPerOperation
        : BytesPerOperation > 0 ? nanosecondsPerOperation / 1e6
        : nanosecondsPerOperation;

    /// <summary>The bytes written per second at <paramref name="nanosecondsPerOperation"/>, in GB/s (10^9 bytes).</summary>
    internal double GigabytesPerSecond(double nanosecondsPerOperation) => BytesPerOperation / nanosecondsPerOperation;
}
