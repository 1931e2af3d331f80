using jemalloc.Benchmarks.Infrastructure;
using jemalloc.Cli.Tests.Verbs;

namespace jemalloc.Cli.Tests.Benchmarks;

/// <summary>The fragmentation sampler sees memory a heap takes and keeps the peak of every figure.</summary>
[Collection(JembenchRuns.Name)]
public unsafe class FragmentationSamplerTests
{
    [Fact]
    public void A_sampler_without_samples_has_no_peak()
    {
        var sampler = new FragmentationSampler(managed: true);
        Assert.Throws<InvalidOperationException>(() => sampler.Peak);
    }

    [Fact]
    public void Jemalloc_memory_taken_and_written_shows_in_the_heap_and_the_peak_stays()
    {
        const int Bytes = 64 << 20;
        var sampler = new FragmentationSampler(managed: false);
        byte* block = (byte*)Jem.Malloc(Bytes);
        Assert.True(block != null);
        try
        {
            new Span<byte>(block, Bytes).Fill(1);
            sampler.Sample(Bytes);
        }
        finally
        {
            Jem.Free(block);
        }

        sampler.Sample(0);
        FragmentationSample peak = sampler.Peak;
        Assert.Equal(Bytes, peak.Live);
        // stats.active counts whole pages of the block; other threads may allocate a little meanwhile.
        Assert.InRange(peak.Heap, Bytes, Bytes + (8L << 20));
        Assert.True(peak.Mapped >= Bytes - (8L << 20), $"mapped grew by {peak.Mapped}");
        Assert.True(peak.Resident >= Bytes / 2, $"resident grew by {peak.Resident}");
    }

    [Fact]
    public void Managed_arrays_kept_across_a_collection_show_in_the_heap()
    {
        const int Bytes = 32 << 20;
        var sampler = new FragmentationSampler(managed: true);
        byte[] array = GC.AllocateUninitializedArray<byte>(Bytes);
        array.AsSpan().Fill(1);
        GC.Collect();
        sampler.Sample(Bytes);
        GC.KeepAlive(array);
        FragmentationSample peak = sampler.Peak;
        Assert.Equal(Bytes, peak.Live);
        Assert.True(peak.Heap >= Bytes - (4L << 20), $"the heap grew by {peak.Heap}");
    }
}
