using System.Buffers;

namespace jemalloc.Tests.Caching;

/// <summary>GetOrAdd factories that throw, re-enter the cache, write nothing or write too much.</summary>
public sealed partial class NativeCacheAttackTests
{
    [Fact]
    public void A_factory_that_throws_adds_nothing_and_the_next_call_tries_again()
    {
        using var cache = new NativeCache(NativeCache.MinimumBudgetBytes);
        var failure = new FormatException("factory failed");
        FormatException thrown = Assert.Throws<FormatException>(() => cache.GetOrAdd("k"u8, failure, static (_, error, writer) =>
        {
            writer.Write("partial"u8);
            throw error;
        }).Dispose());
        Assert.Same(failure, thrown);
        Assert.False(cache.ContainsKey("k"u8));

        using NativeCacheLease lease = cache.GetOrAdd("k"u8, 0, static (_, _, writer) => writer.Write("whole"u8));
        Assert.Equal("whole"u8.ToArray(), lease.Span.ToArray());
        Assert.Equal(1, cache.Count);
    }

    [Fact]
    public void A_factory_that_writes_nothing_adds_an_empty_value()
    {
        using var cache = new NativeCache(NativeCache.MinimumBudgetBytes);
        using (NativeCacheLease lease = cache.GetOrAdd("k"u8, 0, static (_, _, _) => { }))
        {
            Assert.Equal(0, lease.Length);
        }

        Assert.True(cache.ContainsKey("k"u8));
        Assert.Equal(0, cache.GetBytes("k"u8)?.Length);
        int calls = 0;
        using (NativeCacheLease again = cache.GetOrAdd("k"u8, 0, (_, _, _) => calls++))
        {
            Assert.Equal(0, again.Length);
        }

        Assert.Equal(0, calls);
    }

    [Fact]
    public void A_factory_that_writes_more_than_the_budget_is_refused_and_the_key_stays_missing()
    {
        using var cache = new NativeCache(new NativeCacheOptions { BudgetBytes = NativeCache.MinimumBudgetBytes, ShardCount = 1 });
        cache.Set("other", "o"u8);
        Assert.Throws<ArgumentException>(() => cache.GetOrAdd("k"u8, 0, static (_, _, writer) =>
        {
            // In pieces, as a serializer would: the writer must refuse (or the add must) without crashing.
            for (int i = 0; i < 40; i++)
            {
                Span<byte> span = writer.GetSpan(64 << 10);
                span[..(64 << 10)].Fill(7);
                writer.Advance(64 << 10);
            }
        }).Dispose());
        Assert.False(cache.ContainsKey("k"u8));
        Assert.Equal("o"u8.ToArray(), cache.GetBytes("other"u8));
        NativeCacheStatistics statistics = cache.GetStatistics();
        Assert.True(statistics.AllocatedBytes <= statistics.BudgetBytes);
        using NativeCacheLease lease = cache.GetOrAdd("k"u8, 0, static (_, _, writer) => writer.Write("fits"u8));
        Assert.Equal("fits"u8.ToArray(), lease.Span.ToArray());
    }

    [Fact]
    public void A_factory_that_advances_its_writer_wrongly_gets_an_exception()
    {
        using var cache = new NativeCache(NativeCache.MinimumBudgetBytes);
        Assert.ThrowsAny<ArgumentException>(() => cache.GetOrAdd("k"u8, 0, static (_, _, writer) => writer.Advance(-1)).Dispose());
        Assert.ThrowsAny<Exception>(() => cache.GetOrAdd("k"u8, 0, static (_, _, writer) =>
        {
            writer.GetSpan(10);
            writer.Advance(1 << 30);
        }).Dispose());
        Assert.False(cache.ContainsKey("k"u8));
        Assert.True(cache.GetStatistics().AllocatedBytes <= cache.BudgetBytes);
    }

    [Fact]
    public void A_factory_that_writes_other_keys_and_clears_the_cache_leaves_it_consistent()
    {
        using var cache = new NativeCache(NativeCache.MinimumBudgetBytes);
        using (NativeCacheLease lease = cache.GetOrAdd("k"u8, cache, static (_, inner, writer) =>
        {
            inner.Set("side", "s"u8);
            inner.Clear();
            inner.Set("side2", "t"u8);
            writer.Write("v"u8);
        }))
        {
            Assert.Equal("v"u8.ToArray(), lease.Span.ToArray());
        }

        Assert.Equal("v"u8.ToArray(), cache.GetBytes("k"u8));
        Assert.Equal("t"u8.ToArray(), cache.GetBytes("side2"u8));
        NativeCacheStatistics statistics = cache.GetStatistics();
        Assert.Equal(statistics.Entries, cache.Count);
    }

    [Fact]
    public void A_factory_that_disposes_the_cache_is_refused_or_leaves_nothing_behind()
    {
        var cache = new NativeCache(NativeCache.MinimumBudgetBytes);
        try
        {
            using NativeCacheLease lease = cache.GetOrAdd("k"u8, cache, static (_, inner, writer) =>
            {
                inner.Dispose();
                writer.Write("v"u8);
            });
        }
        catch (Exception exception) when (exception is InvalidOperationException or ObjectDisposedException)
        {
        }

        cache.Dispose();
        Assert.Throws<ObjectDisposedException>(() => cache.Set("k", "v"u8));
    }

    [Fact]
    public void A_factory_that_asks_for_its_own_key_is_refused_instead_of_waiting_for_itself()
    {
        using var cache = new NativeCache(NativeCache.MinimumBudgetBytes);
        // On its own thread, so that a deadlock fails this test instead of hanging the run.
        Exception? outcome = null;
        var thread = new Thread(() => outcome = Record.Exception(() => cache.GetOrAdd("k"u8, cache, static (key, inner, writer) =>
        {
            using NativeCacheLease nested = inner.GetOrAdd(key, 0, static (_, _, w) => w.Write("inner"u8));
            writer.Write("outer"u8);
        }).Dispose()));
        thread.Start();
        Assert.True(thread.Join(TimeSpan.FromMinutes(1)), "GetOrAdd re-entered from its own factory deadlocked");
        InvalidOperationException refused = Assert.IsType<InvalidOperationException>(outcome);
        Assert.Contains("re-entered for the same key from its own factory", refused.Message, StringComparison.Ordinal);
        // Nothing stored, no flight left behind: the next call runs its factory.
        Assert.False(cache.ContainsKey("k"u8));
        using NativeCacheLease after = cache.GetOrAdd("k"u8, 0, static (_, _, writer) => writer.Write("later"u8));
        Assert.Equal("later"u8.ToArray(), after.Span.ToArray());
    }

    [Fact]
    public void A_factory_that_asks_for_another_key_still_gets_it()
    {
        using var cache = new NativeCache(NativeCache.MinimumBudgetBytes);
        using (NativeCacheLease outer = cache.GetOrAdd("a"u8, cache, static (_, inner, writer) =>
        {
            using NativeCacheLease nested = inner.GetOrAdd("b"u8, 0, static (_, _, w) => w.Write("b"u8));
            writer.Write(nested.Span);
        }))
        {
            Assert.Equal("b"u8.ToArray(), outer.Span.ToArray());
        }

        Assert.Equal("b"u8.ToArray(), cache.GetBytes("b"u8));
    }

    [Fact]
    public async Task An_async_factory_that_asks_for_its_own_key_is_refused_instead_of_waiting_for_itself()
    {
        // No await inside the factory: it runs on the test's thread (pool threads' first jemalloc use
        // would count against the leak check); NativeCacheGetOrAddAsyncTests repeats it across a thread hop.
        using var cache = new NativeCache(NativeCache.MinimumBudgetBytes);
        byte[] key = "k"u8.ToArray();
        Task<int> call = cache.GetOrAddAsync(key, cache, async (inner, writer, token) =>
        {
            _ = await inner.GetOrAddAsync(key, 0, static (_, w, _) => { w.Write("inner"u8); return ValueTask.CompletedTask; }, static (span, _) => span.Length, cancellationToken: token);
            writer.Write("outer"u8);
        }, static (span, _) => span.Length).AsTask();
        Assert.True(call.IsCompleted, "GetOrAddAsync re-entered from its own factory waits for itself");
        InvalidOperationException refused = await Assert.ThrowsAsync<InvalidOperationException>(() => call);
        Assert.Contains("re-entered for the same key from its own factory", refused.Message, StringComparison.Ordinal);
        Assert.False(cache.ContainsKey(key));
        // The outer flow's scope ended with its call: asking again from here runs a factory.
        int length = await cache.GetOrAddAsync(key, 0, static (_, w, _) => { w.Write("later"u8); return ValueTask.CompletedTask; }, static (span, _) => span.Length);
        Assert.Equal(5, length);
    }

    [Fact]
    public void A_sync_factory_that_asks_for_its_own_key_asynchronously_is_refused()
    {
        using var cache = new NativeCache(NativeCache.MinimumBudgetBytes);
        byte[] key = "k"u8.ToArray();
        Exception? outcome = Record.Exception(() => cache.GetOrAdd(key, cache, static (k, inner, writer) =>
        {
            ValueTask<int> nested = inner.GetOrAddAsync(k.ToArray(), 0, static (_, w, _) => { w.Write("inner"u8); return ValueTask.CompletedTask; }, static (span, _) => span.Length);
            Assert.True(nested.IsCompleted, "the nested call waits for its own factory");
            writer.Write("outer"u8);
            _ = nested.AsTask().GetAwaiter().GetResult();
        }).Dispose());
        Assert.IsType<InvalidOperationException>(outcome);
        Assert.False(cache.ContainsKey(key));
    }

    [Fact]
    public async Task GetOrAddAsync_canceled_before_it_starts_runs_no_factory()
    {
        using var cache = new NativeCache(NativeCache.MinimumBudgetBytes);
        using var canceled = new CancellationTokenSource();
        await canceled.CancelAsync();
        int calls = 0;
        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await cache.GetOrAddAsync("k"u8.ToArray(), 0, (_, writer, _) =>
        {
            calls++;
            writer.Write("v"u8);
            return ValueTask.CompletedTask;
        }, static (value, _) => value.Length, cancellationToken: canceled.Token));
        Assert.Equal(0, calls);
        Assert.False(cache.ContainsKey("k"u8));
    }

    [Fact]
    public async Task GetOrAddAsync_canceled_inside_the_factory_adds_nothing_and_the_next_call_works()
    {
        using var cache = new NativeCache(NativeCache.MinimumBudgetBytes);
        using var source = new CancellationTokenSource();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await cache.GetOrAddAsync("k"u8.ToArray(), source, static async (cancel, writer, token) =>
        {
            writer.Write("partial"u8);
            await cancel.CancelAsync();
            token.ThrowIfCancellationRequested();
        }, static (value, _) => value.Length, cancellationToken: source.Token));
        Assert.False(cache.ContainsKey("k"u8));
        Assert.Equal(5, await cache.GetOrAddAsync("k"u8.ToArray(), 0, static (_, writer, _) =>
        {
            writer.Write("whole"u8);
            return ValueTask.CompletedTask;
        }, static (value, _) => value.Length));
    }

    [Fact]
    public async Task GetOrAddAsync_whose_reader_throws_ends_its_lease()
    {
        using var cache = new NativeCache(NativeCache.MinimumBudgetBytes);
        await Assert.ThrowsAsync<FormatException>(async () => await cache.GetOrAddAsync("k"u8.ToArray(), 0, static (_, writer, _) =>
        {
            writer.Write("v"u8);
            return ValueTask.CompletedTask;
        }, static NativeCacheValueReader<int, int> (_, _) => throw new FormatException("reader failed")));
        Assert.True(cache.ContainsKey("k"u8));
        Assert.Equal(0, cache.GetStatistics().PinnedBytes);
    }
}
