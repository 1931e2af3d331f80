using System.Buffers;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.Caching;

[Collection(LeakChecked.Name)]
public sealed class NativeCacheGetOrAddTests : LeakCheckedTest
{
    [Fact]
    public void Sixteen_concurrent_callers_get_one_factory_call_and_the_same_value()
    {
        using var cache = new NativeCache(8 << 20);
        int calls = 0;
        using var start = new Barrier(16);
        byte[][] seen = new byte[16][];
        var threads = new Thread[16];
        for (int t = 0; t < threads.Length; t++)
        {
            int index = t;
            threads[t] = new Thread(() =>
            {
                start.SignalAndWait();
                using NativeCacheLease lease = cache.GetOrAdd("key"u8, 0, (key, _, writer) =>
                {
                    Interlocked.Increment(ref calls);
                    // Long enough for the others to arrive and wait.
                    Thread.Sleep(200);
                    writer.Write(CacheTestData.Value(9, 1, 5000));
                });
                seen[index] = lease.Span.ToArray();
            });
            threads[t].Start();
        }

        foreach (Thread thread in threads)
        {
            thread.Join();
        }

        Assert.Equal(1, calls);
        foreach (byte[] value in seen)
        {
            Assert.True(CacheTestData.IsIntact(value, 9, out long version) && version == 1);
        }
    }

    [Fact]
    public void A_hit_calls_no_factory()
    {
        using var cache = new NativeCache(8 << 20);
        cache.Set("k"u8, [5]);
        using NativeCacheLease lease = cache.GetOrAdd("k"u8, 0, static (_, _, _) => throw new InvalidOperationException("not called"));
        Assert.Equal([5], lease.Span.ToArray());
        Assert.Throws<ArgumentNullException>(() => cache.GetOrAdd<int>("k"u8, 0, null!));
    }

    [Fact]
    public void A_factory_exception_reaches_the_caller_and_the_waiters_and_the_next_call_tries_again()
    {
        using var cache = new NativeCache(8 << 20);
        int calls = 0;
        using var start = new Barrier(8);
        var errors = new Exception?[8];
        var threads = new Thread[8];
        for (int t = 0; t < threads.Length; t++)
        {
            int index = t;
            threads[t] = new Thread(() =>
            {
                start.SignalAndWait();
                try
                {
                    using NativeCacheLease lease = cache.GetOrAdd("key"u8, 0, (_, _, _) =>
                    {
                        Interlocked.Increment(ref calls);
                        Thread.Sleep(200);
                        throw new InvalidDataException("factory failed");
                    });
                }
                catch (Exception e)
                {
                    errors[index] = e;
                }
            });
            threads[t].Start();
        }

        foreach (Thread thread in threads)
        {
            thread.Join();
        }

        Assert.All(errors, e => Assert.Equal("factory failed", Assert.IsType<InvalidDataException>(e).Message));
        Assert.True(calls < 8, $"{calls} factory calls for 8 callers that arrived together.");
        Assert.False(cache.ContainsKey("key"u8));
        using NativeCacheLease after = cache.GetOrAdd("key"u8, 0, static (_, _, w) => w.Write<byte>([7]));
        Assert.Equal([7], after.Span.ToArray());
    }
}
