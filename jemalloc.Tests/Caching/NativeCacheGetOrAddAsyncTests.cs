using System.Buffers;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.Caching;

/// <summary>
/// GetOrAddAsync. Its continuations run on pool threads, whose first use of jemalloc creates thread
/// caches that jemalloc's allocated bytes count, so these tests check the ledger alone (in the
/// leak-checked collection, which runs alone): every allocation of the cache was freed.
/// </summary>
[Collection(LeakChecked.Name)]
public sealed class NativeCacheGetOrAddAsyncTests : IDisposable
{
    private readonly long _liveCount = AllocationLedger.LiveCount;
    private readonly long _liveBytes = AllocationLedger.LiveBytes;

    public void Dispose()
    {
        Assert.Equal(_liveCount, AllocationLedger.LiveCount);
        Assert.Equal(_liveBytes, AllocationLedger.LiveBytes);
    }

    [Fact]
    public async Task The_async_form_calls_one_factory_and_reads_under_the_lease()
    {
        using var cache = new NativeCache(8 << 20);
        int calls = 0;
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        Func<int, IBufferWriter<byte>, CancellationToken, ValueTask> factory = async (_, writer, token) =>
        {
            Interlocked.Increment(ref calls);
            await release.Task.WaitAsync(token);
            writer.Write(CacheTestData.Value(3, 1, 100));
        };
        NativeCacheValueReader<int, long> reader = static (value, _) => CacheTestData.IsIntact(value, 3, out long version) ? version : -1;
        var calls8 = new Task<long>[8];
        for (int i = 0; i < calls8.Length; i++)
        {
            calls8[i] = cache.GetOrAddAsync("k"u8.ToArray(), 0, factory, reader).AsTask();
        }

        release.SetResult();
        foreach (Task<long> call in calls8)
        {
            Assert.Equal(1, await call);
        }

        Assert.Equal(1, calls);
        Assert.Equal(1, await cache.GetOrAddAsync("k"u8.ToArray(), 0, factory, reader));
        Assert.Equal(1, calls);
    }

    [Fact]
    public async Task A_canceled_waiter_leaves_while_the_factory_goes_on()
    {
        using var cache = new NativeCache(8 << 20);
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        NativeCacheValueReader<int, int> reader = static (value, _) => value.Length;
        Task<int> first = cache.GetOrAddAsync("k"u8.ToArray(), 0, async (_, writer, _) =>
        {
            await release.Task;
            writer.Write(new byte[42]);
        }, reader).AsTask();
        using var cancel = new CancellationTokenSource();
        Task<int> waiter = cache.GetOrAddAsync("k"u8.ToArray(), 0, static (_, _, _) => throw new InvalidOperationException("not called"), reader, cancellationToken: cancel.Token).AsTask();
        cancel.Cancel();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await waiter);
        Assert.False(first.IsCompleted);
        release.SetResult();
        Assert.Equal(42, await first);
    }

    [Fact]
    public async Task When_the_first_caller_is_canceled_its_factory_stops_and_a_waiter_runs_its_own()
    {
        using var cache = new NativeCache(8 << 20);
        using var cancel = new CancellationTokenSource();
        var started = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        NativeCacheValueReader<int, int> reader = static (value, _) => value.Length;
        Task<int> first = cache.GetOrAddAsync("k"u8.ToArray(), 0, async (_, writer, token) =>
        {
            started.SetResult();
            await Task.Delay(Timeout.Infinite, token);
        }, reader, cancellationToken: cancel.Token).AsTask();
        await started.Task;
        Task<int> second = cache.GetOrAddAsync("k"u8.ToArray(), 0, static (_, writer, _) =>
        {
            writer.Write(new byte[7]);
            return ValueTask.CompletedTask;
        }, reader).AsTask();
        cancel.Cancel();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await first);
        Assert.Equal(7, await second);
    }

    [Fact]
    public async Task The_async_form_checks_its_arguments()
    {
        using var cache = new NativeCache(8 << 20);
        NativeCacheValueReader<int, int> reader = static (value, _) => value.Length;
        await Assert.ThrowsAsync<ArgumentNullException>(async () => await cache.GetOrAddAsync("k"u8.ToArray(), 0, null!, reader));
        await Assert.ThrowsAsync<ArgumentNullException>(async () => await cache.GetOrAddAsync<int, int>("k"u8.ToArray(), 0, static (_, _, _) => ValueTask.CompletedTask, null!));
        await Assert.ThrowsAsync<ArgumentException>(async () => await cache.GetOrAddAsync(new byte[NativeCache.MaxKeyLength + 1], 0, static (_, _, _) => ValueTask.CompletedTask, reader));
        await Assert.ThrowsAsync<InvalidDataException>(async () => await cache.GetOrAddAsync("k"u8.ToArray(), 0, static (_, _, _) => throw new InvalidDataException("bad"), reader));
        Assert.False(cache.ContainsKey("k"u8));
    }

    [Fact]
    public async Task An_async_factory_that_asks_for_its_own_key_after_a_thread_hop_is_refused()
    {
        using var cache = new NativeCache(NativeCache.MinimumBudgetBytes);
        byte[] key = "k"u8.ToArray();
        Task<int> call = cache.GetOrAddAsync(key, cache, async (inner, writer, token) =>
        {
            await Task.Yield();
            // The nested call runs on a pool thread, not the one that started the outer factory.
            _ = await inner.GetOrAddAsync(key, 0, static (_, w, _) => { w.Write("inner"u8); return ValueTask.CompletedTask; }, static (span, _) => span.Length, cancellationToken: token);
            writer.Write("outer"u8);
        }, static (span, _) => span.Length).AsTask();
        Task finished = await Task.WhenAny(call, Task.Delay(TimeSpan.FromMinutes(1)));
        Assert.Same(call, finished);
        InvalidOperationException refused = await Assert.ThrowsAsync<InvalidOperationException>(() => call);
        Assert.Contains("re-entered for the same key from its own factory", refused.Message, StringComparison.Ordinal);
        Assert.False(cache.ContainsKey(key));
        // The outer flow's scope ended with its call: asking again from here runs a factory.
        int length = await cache.GetOrAddAsync(key, 0, static (_, w, _) => { w.Write("later"u8); return ValueTask.CompletedTask; }, static (span, _) => span.Length);
        Assert.Equal(5, length);
    }
}
