using System.Buffers;
using System.Runtime.InteropServices;
using System.Text;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.Caching;

/// <summary>
/// A write that open leases leave no room for keeps the key's old value, whichever member wrote it; a
/// replacement that needs its old entry's room still gets it.
/// </summary>
[Collection(LeakChecked.Name)]
public sealed class NativeCacheFailedWriteTests : LeakCheckedTest
{
    private const int Levels = 46;
    private static readonly byte[] Old = "old"u8.ToArray();

    public static TheoryData<string> Writers => ["Set(span)", "Set(sequence)", "Set(string)", "Set<TKey>", "SetValue<TValue>", "SetValue<TKey, TValue>"];

    [Theory]
    [MemberData(nameof(Writers))]
    public void A_write_that_leases_leave_no_room_for_keeps_the_old_value(string writer)
    {
        using var cache = new NativeCache(new NativeCacheOptions { BudgetBytes = NativeCache.MinimumBudgetBytes, ShardCount = 1 });
        byte[] key = KeyOf(writer);
        cache.Set(key, Old);
        long writesBefore = 0;
        InvalidOperationException? failure = null;
        PinThen(cache, 0, () =>
        {
            writesBefore = cache.GetStatistics().Writes;
            failure = Assert.Throws<InvalidOperationException>(() => Write(cache, writer));
            AssertConsistent(cache, key, writesBefore);
        });

        Assert.NotNull(failure);
        Assert.Contains("cannot make room", failure.Message, StringComparison.Ordinal);
        AssertConsistent(cache, key, writesBefore);
        Assert.Equal(0, cache.GetStatistics().PinnedBytes);

        // With the leases gone the same write goes through.
        Write(cache, writer);
        Assert.Equal(BigValue.Length, cache.GetBytes(key)!.Length);
    }

    [Fact]
    public void A_write_that_fails_while_a_lease_is_open_on_the_old_value_itself_keeps_it()
    {
        using var cache = new NativeCache(new NativeCacheOptions { BudgetBytes = NativeCache.MinimumBudgetBytes, ShardCount = 1 });
        cache.Set("victim", Old);
        Assert.True(cache.TryGet("victim", out NativeCacheLease own));
        using (own)
        {
            long writesBefore = 0;
            PinThen(cache, 0, () =>
            {
                writesBefore = cache.GetStatistics().Writes;
                _ = Assert.Throws<InvalidOperationException>(() => cache.Set("victim", BigValue));
            });

            Assert.Equal(Old, own.Span.ToArray());
            AssertConsistent(cache, "victim"u8.ToArray(), writesBefore);
        }
    }

    [Fact]
    public void A_write_that_fails_after_its_old_value_was_taken_out_to_make_room_puts_it_back()
    {
        // The old value, bigger than a segment, is in a segment of its own that no lease pins: making
        // room for its replacement reclaims that segment (the entry cannot move), and the write then
        // fails on the leases: the old value comes back.
        using var cache = new NativeCache(new NativeCacheOptions { BudgetBytes = NativeCache.MinimumBudgetBytes, ShardCount = 1 });
        byte[] oldBig = CacheTestData.Value(1, 1, 200_000);
        cache.Set("victim", oldBig);
        long writesBefore = 0;
        PinThen(cache, 0, () =>
        {
            writesBefore = cache.GetStatistics().Writes;
            long replacedBefore = cache.GetStatistics().Replaced;
            long evictedBefore = cache.GetStatistics().EvictedForCapacity;
            _ = Assert.Throws<InvalidOperationException>(() => cache.Set("victim", new byte[600_000]));
            Assert.Equal(oldBig, cache.GetBytes("victim"u8));
            Assert.Equal(replacedBefore, cache.GetStatistics().Replaced);
            Assert.True(cache.GetStatistics().EvictedForCapacity >= evictedBefore);
        }, levels: 30);

        Assert.Equal(oldBig, cache.GetBytes("victim"u8));
        AssertConsistent(cache, "victim"u8.ToArray(), writesBefore, expected: oldBig, pinnedLevels: 30);
    }

    [Fact]
    public void A_replacement_that_needs_its_old_entrys_room_still_gets_it()
    {
        // Each value is more than half the budget: the new one fits only once the old one has gone.
        using var cache = new NativeCache(new NativeCacheOptions { BudgetBytes = NativeCache.MinimumBudgetBytes, ShardCount = 1 });
        cache.Set("big", CacheTestData.Value(1, 1, 600_000));
        cache.Set("big", CacheTestData.Value(1, 2, 600_000));
        Assert.True(CacheTestData.IsIntact(cache.GetBytes("big"u8), 1, out long version));
        Assert.Equal(2, version);
        NativeCacheStatistics statistics = cache.GetStatistics();
        Assert.Equal(1, statistics.Entries);
        Assert.Equal(1, statistics.Replaced);
        Assert.Equal(0, statistics.EvictedForCapacity);
        Assert.Equal(2, statistics.Writes);
        Assert.True(statistics.AllocatedBytes <= statistics.BudgetBytes);
    }

    [Fact]
    public void A_GetOrAdd_whose_value_leases_leave_no_room_for_fails_and_leaves_no_flight()
    {
        using var cache = new NativeCache(new NativeCacheOptions { BudgetBytes = NativeCache.MinimumBudgetBytes, ShardCount = 1 });
        int calls = 0;
        PinThen(cache, 0, () =>
        {
            _ = Assert.Throws<InvalidOperationException>(() =>
            {
                using NativeCacheLease lease = cache.GetOrAdd("new"u8, 0, (key, state, writer) =>
                {
                    calls++;
                    writer.Write(BigValue);
                });
            });
            Assert.False(cache.ContainsKey("new"u8));
            Assert.Equal(0, cache.Flights.Count);
        });

        Assert.Equal(1, calls);
        using NativeCacheLease after = cache.GetOrAdd("new"u8, 0, (key, state, writer) =>
        {
            calls++;
            writer.Write(BigValue);
        });
        Assert.Equal(BigValue.Length, after.Length);
        Assert.Equal(2, calls);
    }

    [Fact]
    public async Task A_GetOrAddAsync_whose_value_leases_leave_no_room_for_fails_and_leaves_no_flight()
    {
        using var cache = new NativeCache(new NativeCacheOptions { BudgetBytes = NativeCache.MinimumBudgetBytes, ShardCount = 1 });
        Func<int, IBufferWriter<byte>, CancellationToken, ValueTask> factory = (state, writer, token) =>
        {
            writer.Write(BigValue);
            return ValueTask.CompletedTask;
        };
        ValueTask<int> failed = default;
        PinThen(cache, 0, () => failed = cache.GetOrAddAsync("new"u8.ToArray(), 0, factory, (span, state) => span.Length));
        _ = await Assert.ThrowsAsync<InvalidOperationException>(failed.AsTask);
        Assert.False(cache.ContainsKey("new"u8));
        Assert.Equal(0, cache.Flights.Count);
        Assert.Equal(BigValue.Length, await cache.GetOrAddAsync("new"u8.ToArray(), 0, factory, (span, state) => span.Length));
    }

    private static readonly byte[] BigValue = new byte[Marshal.SizeOf<Big>()];

    private static byte[] KeyOf(string writer) => writer switch
    {
        "Set(string)" => Encoding.UTF8.GetBytes("victim"),
        "Set<TKey>" or "SetValue<TKey, TValue>" => BitConverter.GetBytes(7L),
        _ => "victim"u8.ToArray(),
    };

    private static void Write(NativeCache cache, string writer)
    {
        byte[] key = KeyOf(writer);
        switch (writer)
        {
            case "Set(span)":
                cache.Set(key, BigValue);
                break;
            case "Set(sequence)":
                cache.Set(key, new ReadOnlySequence<byte>(BigValue));
                break;
            case "Set(string)":
                cache.Set("victim", BigValue);
                break;
            case "Set<TKey>":
                cache.Set(7L, BigValue);
                break;
            case "SetValue<TValue>":
                cache.SetValue(key, new Big());
                break;
            case "SetValue<TKey, TValue>":
                cache.SetValue(7L, new Big());
                break;
            default:
                throw new ArgumentOutOfRangeException(nameof(writer), writer, "No such writer.");
        }
    }

    // Leases on `levels` entries of 20,000 bytes each (46 of them pin nearly all of a 1 MiB budget), open while `innermost` runs.
    private static void PinThen(NativeCache cache, int depth, Action innermost, int levels = Levels)
    {
        byte[] key = BitConverter.GetBytes(1000 + depth);
        cache.Set(key, new byte[20_000]);
        Assert.True(cache.TryGet(key, out NativeCacheLease lease));
        using (lease)
        {
            if (depth + 1 < levels)
            {
                PinThen(cache, depth + 1, innermost, levels);
            }
            else
            {
                innermost();
            }
        }
    }

    // The old value is there, unchanged; the failed write counted nothing; the counters agree with the
    // keys present; the budget was kept.
    private static void AssertConsistent(NativeCache cache, byte[] key, long writesBefore, byte[]? expected = null, int pinnedLevels = Levels)
    {
        Assert.Equal(expected ?? Old, cache.GetBytes(key));
        NativeCacheStatistics statistics = cache.GetStatistics();
        Assert.Equal(writesBefore, statistics.Writes);
        long present = 1;
        long keyValueBytes = key.Length + (expected ?? Old).Length;
        for (int depth = 0; depth < pinnedLevels; depth++)
        {
            if (cache.ContainsKey(BitConverter.GetBytes(1000 + depth)))
            {
                present++;
                keyValueBytes += sizeof(int) + 20_000;
            }
        }

        Assert.Equal(present, statistics.Entries);
        Assert.Equal(present, cache.Count);
        Assert.Equal(keyValueBytes, statistics.KeyValueBytes);
        Assert.True(statistics.AllocatedBytes <= statistics.BudgetBytes, $"{statistics.AllocatedBytes:N0} bytes allocated over a budget of {statistics.BudgetBytes:N0}");
    }

    [StructLayout(LayoutKind.Sequential, Size = 100_000)]
    private struct Big
    {
        public byte First;
    }
}
