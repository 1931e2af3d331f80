using System.Runtime.InteropServices;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.Caching;

/// <summary>
/// Every member with a struct key takes one of <see cref="NativeCache.MaxKeyLength"/> bytes and refuses a
/// longer one with the span overloads' <see cref="ArgumentException"/>, however long (a key passed by
/// value this big once made the JIT reject the caller with <see cref="InvalidProgramException"/>).
/// </summary>
[Collection(LeakChecked.Name)]
public sealed class NativeCacheStructKeyLengthTests : LeakCheckedTest
{
    [Fact]
    public void A_struct_key_of_the_longest_length_is_taken_by_every_member() => OnABigStack(Accepted<K65536>);

    [Fact]
    public void A_struct_key_one_byte_too_long_is_refused_by_every_member() => OnABigStack(Refused<K65537>);

    [Fact]
    public void A_struct_key_of_70000_bytes_is_refused_by_every_member() => OnABigStack(Refused<K70000>);

    [Fact]
    public void A_struct_key_of_a_million_bytes_is_refused_by_every_member() => OnABigStack(Refused<K1000000>);

    private static void Accepted<TKey>() where TKey : unmanaged
    {
        Assert.Equal(NativeCache.MaxKeyLength, Marshal.SizeOf<TKey>());
        using var cache = new NativeCache(NativeCache.MinimumBudgetBytes);
        TKey key = default;
        cache.Set(key, "x"u8);
        Assert.True(cache.TryGet(key, out NativeCacheLease lease));
        using (lease)
        {
            Assert.Equal("x"u8.ToArray(), lease.Span.ToArray());
        }

        Assert.True(cache.TryGetValue(key, out byte read));
        Assert.Equal((byte)'x', read);
        cache.SetValue(key, 42L);
        Assert.True(cache.TryGetValue(key, out long value));
        Assert.Equal(42L, value);
        Assert.True(cache.ContainsKey(new byte[NativeCache.MaxKeyLength]));
        Assert.True(cache.Remove(key));
        Assert.False(cache.TryGet(key, out _));
        Assert.Equal(0, cache.Count);
    }

    private static void Refused<TKey>() where TKey : unmanaged
    {
        int length = Marshal.SizeOf<TKey>();
        Assert.True(length > NativeCache.MaxKeyLength);
        using var cache = new NativeCache(NativeCache.MinimumBudgetBytes);
        string expected = Assert.Throws<ArgumentException>(() => cache.Set(new byte[length], "x"u8)).Message;
        TKey key = default;
        AssertRefused(expected, () => cache.Set(key, "x"u8));
        AssertRefused(expected, () => cache.SetValue(key, 42L));
        AssertRefused(expected, () => cache.TryGet(key, out _));
        AssertRefused(expected, () => cache.TryGetValue(key, out long _));
        AssertRefused(expected, () => cache.Remove(key));
        NativeCacheStatistics statistics = cache.GetStatistics();
        Assert.Equal(0, statistics.Entries);
        Assert.Equal(0, statistics.Writes);
        Assert.Equal(0, statistics.Hits + statistics.Misses);
    }

    private static void AssertRefused(string expected, Action call)
    {
        ArgumentException refused = Assert.Throws<ArgumentException>(call);
        Assert.Equal("key", refused.ParamName);
        Assert.Equal(expected, refused.Message);
        Assert.Contains("65,536", refused.Message, StringComparison.Ordinal);
    }

    // A million-byte key is a million-byte local: the test runs on a thread with room for it.
    private static void OnABigStack(Action test)
    {
        Exception? failure = null;
        var thread = new Thread(() =>
        {
            try
            {
                test();
            }
            catch (Exception e)
            {
                failure = e;
            }
        }, maxStackSize: 32 << 20);
        thread.Start();
        thread.Join();
        if (failure is not null)
        {
            System.Runtime.ExceptionServices.ExceptionDispatchInfo.Throw(failure);
        }
    }

    [StructLayout(LayoutKind.Sequential, Size = 65_536)]
    private struct K65536
    {
        public byte First;
    }

    [StructLayout(LayoutKind.Sequential, Size = 65_537)]
    private struct K65537
    {
        public byte First;
    }

    [StructLayout(LayoutKind.Sequential, Size = 70_000)]
    private struct K70000
    {
        public byte First;
    }

    [StructLayout(LayoutKind.Sequential, Size = 1_000_000)]
    private struct K1000000
    {
        public byte First;
    }
}
