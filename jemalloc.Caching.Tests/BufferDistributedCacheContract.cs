using System.Buffers;
using Microsoft.Extensions.Caching.Distributed;

namespace jemalloc.Caching.Tests;

/// <summary>
/// What an <see cref="IBufferDistributedCache"/> does beyond <see cref="IDistributedCache"/> (the path
/// HybridCache takes when offered it), run against NativeDistributedCache and RedisCache on Garnet:
/// values written from sequences of segments and read into a buffer writer, interchangeable with the
/// array calls. MemoryDistributedCache is no IBufferDistributedCache.
/// </summary>
public abstract class BufferDistributedCacheContract : IDisposable
{
    protected abstract IBufferDistributedCache Cache { get; }

    public abstract void Dispose();

    private static DistributedCacheEntryOptions NoExpiry => new();

    [Fact]
    public void A_missing_key_writes_nothing_and_gives_false()
    {
        var destination = new ArrayBufferWriter<byte>();
        Assert.False(Cache.TryGet("missing", destination));
        Assert.Equal(0, destination.WrittenCount);
    }

    [Fact]
    public async Task A_missing_key_writes_nothing_and_gives_false_async()
    {
        var destination = new ArrayBufferWriter<byte>();
        Assert.False(await Cache.TryGetAsync("missing", destination));
        Assert.Equal(0, destination.WrittenCount);
    }

    [Fact]
    public void A_value_written_from_many_segments_is_read_back_whole()
    {
        byte[] value = TestValues.Make("k", 1, 100_000);
        Cache.Set("k", Segments(value, 7, 1000, 1, 30_000), NoExpiry);
        var destination = new ArrayBufferWriter<byte>();
        Assert.True(Cache.TryGet("k", destination));
        Assert.Equal(value, destination.WrittenSpan.ToArray());
        Assert.Equal(value, Cache.Get("k"));
    }

    [Fact]
    public async Task A_value_written_from_many_segments_is_read_back_whole_async()
    {
        byte[] value = TestValues.Make("k", 2, 6 << 20);
        await Cache.SetAsync("k", Segments(value, 1 << 20, 3, 2 << 20), NoExpiry);
        var destination = new ArrayBufferWriter<byte>();
        Assert.True(await Cache.TryGetAsync("k", destination));
        Assert.Equal(2, TestValues.VersionOf("k", destination.WrittenSpan));
        Assert.Equal(value.Length, destination.WrittenCount);
    }

    [Fact]
    public void A_read_appends_to_what_the_writer_already_holds()
    {
        byte[] value = TestValues.Make("k", 3, 500);
        Cache.Set("k", value, NoExpiry);
        var destination = new ArrayBufferWriter<byte>();
        destination.Write<byte>([9, 9, 9]);
        Assert.True(Cache.TryGet("k", destination));
        Assert.Equal([9, 9, 9], destination.WrittenSpan[..3].ToArray());
        Assert.Equal(value, destination.WrittenSpan[3..].ToArray());
    }

    [Fact]
    public void Single_segment_and_empty_sequences_are_values_too()
    {
        Cache.Set("one", new ReadOnlySequence<byte>([1, 2, 3]), NoExpiry);
        Cache.Set("none", ReadOnlySequence<byte>.Empty, NoExpiry);
        Assert.Equal([1, 2, 3], Cache.Get("one"));
        var destination = new ArrayBufferWriter<byte>();
        Assert.True(Cache.TryGet("none", destination));
        Assert.Equal(0, destination.WrittenCount);
    }

    [Fact]
    public void A_sequence_write_replaces_an_array_write_and_expires_like_one()
    {
        Cache.Set("k", TestValues.Make("k", 1, 100), NoExpiry);
        Cache.Set("k", Segments(TestValues.Make("k", 2, 100), 10, 90), new DistributedCacheEntryOptions { AbsoluteExpiration = DateTimeOffset.UtcNow.AddMinutes(5) });
        Assert.Equal(2, TestValues.VersionOf("k", Cache.Get("k")));
        Cache.Remove("k");
        Assert.False(Cache.TryGet("k", new ArrayBufferWriter<byte>()));
    }

    [Fact]
    public async Task Null_keys_and_options_are_refused_with_ArgumentNullException()
    {
        var destination = new ArrayBufferWriter<byte>();
        Assert.Equal("key", Assert.Throws<ArgumentNullException>(() => Cache.TryGet(null!, destination)).ParamName);
        Assert.Equal("key", (await Assert.ThrowsAsync<ArgumentNullException>(() => Cache.TryGetAsync(null!, destination).AsTask())).ParamName);
        Assert.Equal("key", Assert.Throws<ArgumentNullException>(() => Cache.Set(null!, new ReadOnlySequence<byte>([1]), NoExpiry)).ParamName);
        Assert.Equal("key", (await Assert.ThrowsAsync<ArgumentNullException>(() => Cache.SetAsync(null!, new ReadOnlySequence<byte>([1]), NoExpiry).AsTask())).ParamName);
        Assert.Equal("options", Assert.Throws<ArgumentNullException>(() => Cache.Set("k", new ReadOnlySequence<byte>([1]), null!)).ParamName);
        Assert.Equal("options", (await Assert.ThrowsAsync<ArgumentNullException>(() => Cache.SetAsync("k", new ReadOnlySequence<byte>([1]), null!).AsTask())).ParamName);
        Assert.Null(Cache.Get("k"));
    }

    [Fact]
    public async Task Calls_with_a_canceled_token_are_canceled_and_change_nothing()
    {
        using var canceled = new CancellationTokenSource();
        await canceled.CancelAsync();
        Cache.Set("kept", [1], NoExpiry);
        var destination = new ArrayBufferWriter<byte>();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => Cache.TryGetAsync("kept", destination, canceled.Token).AsTask());
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => Cache.SetAsync("new", new ReadOnlySequence<byte>([2]), NoExpiry, canceled.Token).AsTask());
        Assert.Equal(0, destination.WrittenCount);
        Assert.Null(Cache.Get("new"));
    }

    /// <summary>The value cut into segments of the given lengths (the last one takes the rest).</summary>
    internal static ReadOnlySequence<byte> Segments(byte[] value, params int[] lengths)
    {
        var first = new Segment(ReadOnlyMemory<byte>.Empty, 0);
        Segment last = first;
        int offset = 0;
        foreach (int length in lengths.Append(int.MaxValue))
        {
            int take = Math.Min(length, value.Length - offset);
            last = last.Append(value.AsMemory(offset, take));
            offset += take;
        }

        return new ReadOnlySequence<byte>(first, 0, last, last.Memory.Length);
    }

    internal sealed class Segment : ReadOnlySequenceSegment<byte>
    {
        internal Segment(ReadOnlyMemory<byte> memory, long runningIndex)
        {
            Memory = memory;
            RunningIndex = runningIndex;
        }

        internal Segment Append(ReadOnlyMemory<byte> memory)
        {
            var next = new Segment(memory, RunningIndex + Memory.Length);
            Next = next;
            return next;
        }
    }
}
