using System.Collections.Concurrent;
using BenchmarkDotNet.Running;

namespace jemalloc.Benchmarks.Infrastructure;

/// <summary>
/// The fragmentation the <c>malloc --fragment</c> rows measured (in this process, after their timed
/// run), and the columns that show it: the peak over the rounds of each figure of
/// <see cref="FragmentationSample"/>, in MiB, and the peak heap over the peak live bytes.
/// </summary>
public static class FragmentationColumns
{
    private static readonly ConcurrentDictionary<(Type Suite, string Method, long Parameter), FragmentationSample> Peaks = new();

    /// <summary>Bytes the pattern holds alive.</summary>
    public static FragmentationColumn Live { get; } = new("FragLive", "Live MiB", "Peak bytes the pattern holds alive at the end of a round (the same on both heaps), MiB", 1, ratio: false, s => s.Live);

    /// <summary>The heap's size.</summary>
    public static FragmentationColumn Heap { get; } = new("FragHeap", "Heap MiB",
        "Peak growth of the heap: managed GCMemoryInfo.HeapSizeBytes (as of the latest GC); jemalloc stats.active, MiB", 2, ratio: false, s => s.Heap);

    /// <summary>The heap's size over the live bytes.</summary>
    public static FragmentationColumn HeapOverLive { get; } = new("FragHeapOverLive", "Heap/Live",
        "Peak heap growth over peak live bytes: 1.00 is a heap holding nothing but the live blocks", 3, ratio: true, s => s.Live > 0 ? s.Heap / (double)s.Live : double.NaN);

    /// <summary>Space in the heap holding nothing.</summary>
    public static FragmentationColumn Fragmented { get; } = new("FragFree", "Frag MiB",
        "Peak growth of space inside the heap holding nothing: managed GCMemoryInfo.FragmentedBytes (as of the latest GC); jemalloc stats.active - stats.allocated, MiB", 4, ratio: false, s => s.Fragmented);

    /// <summary>Memory the heap holds from the system.</summary>
    public static FragmentationColumn Mapped { get; } = new("FragMapped", "Committed/Mapped MiB",
        "Peak growth of the memory the heap holds from the system: managed GCMemoryInfo.TotalCommittedBytes; jemalloc stats.mapped (also freed pages not yet purged), MiB", 5, ratio: false, s => s.Mapped);

    /// <summary>The process's resident memory.</summary>
    public static FragmentationColumn Resident { get; } = new("FragRss", "RSS MiB",
        "Peak growth of the process's resident memory (VmRSS) over the sampled pass, MiB", 6, ratio: false, s => s.Resident);

    /// <summary>Every fragmentation column, in order.</summary>
    public static IReadOnlyList<FragmentationColumn> All { get; } = [Live, Heap, HeapOverLive, Fragmented, Mapped, Resident];

    /// <summary>Records the peaks measured for <paramref name="method"/> of <paramref name="suite"/> at <paramref name="parameter"/>.</summary>
    public static void Record(Type suite, string method, long parameter, FragmentationSample peak)
    {
        ArgumentNullException.ThrowIfNull(suite);
        ArgumentNullException.ThrowIfNull(method);
        Peaks[(suite, method, parameter)] = peak;
    }

    /// <summary>The peaks measured for <paramref name="benchmarkCase"/>, or null.</summary>
    public static FragmentationSample? Find(BenchmarkCase benchmarkCase)
    {
        ArgumentNullException.ThrowIfNull(benchmarkCase);
        object? parameter = benchmarkCase.Parameters.Items.FirstOrDefault(p => p.Name == "Parameter")?.Value;
        return parameter is long value &&
               Peaks.TryGetValue((benchmarkCase.Descriptor.Type, benchmarkCase.Descriptor.WorkloadMethod.Name, value), out FragmentationSample peak)
            ? peak
            : null;
    }
}
