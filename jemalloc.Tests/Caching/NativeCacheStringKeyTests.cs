using System.Text;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.Caching;

/// <summary>String keys are their strict UTF-8 bytes: a string UTF-8 cannot represent is refused, never merged with another.</summary>
[Collection(LeakChecked.Name)]
public sealed class NativeCacheStringKeyTests : LeakCheckedTest
{
    // Lossy UTF-8 would make each of these U+FFFD (or contain it): two different keys, one entry. By
    // number, since a test runner's serialization may itself replace a lone surrogate.
    private static readonly (string Key, int Index)[] LoneSurrogates =
    [
        ("\uD800", 0),
        ("\uDC00", 0),
        ("a\uD83Db", 1),
        ("\uDE00\uD83D", 0),
        // Past the stack buffer: the pooled path is as strict.
        (new string('k', 600) + "\uD800", 600),
    ];

    [Theory]
    [InlineData(0)]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(3)]
    [InlineData(4)]
    public void A_string_key_with_a_lone_surrogate_is_refused_by_every_member(int which)
    {
        (string key, int index) = LoneSurrogates[which];
        using var cache = new NativeCache(8 << 20);
        var e = Assert.Throws<ArgumentException>(() => cache.Set(key, [1]));
        Assert.Equal("key", e.ParamName);
        Assert.Contains($"lone surrogate at index {index}", e.Message, StringComparison.Ordinal);
        Assert.Equal("key", Assert.Throws<ArgumentException>(() => cache.TryGet(key, out _)).ParamName);
        Assert.Equal("key", Assert.Throws<ArgumentException>(() => cache.Remove(key)).ParamName);
        Assert.Equal(0, cache.Count);
    }

    [Fact]
    public void Two_strings_that_lossy_UTF8_would_merge_are_never_one_key()
    {
        using var cache = new NativeCache(8 << 20);
        // "\uFFFD" is what a lossy encoder makes of "\uD800": the valid one is stored, the other refused.
        cache.Set("\uFFFD", [7]);
        _ = Assert.Throws<ArgumentException>(() => cache.TryGet("\uD800", out _));
        _ = Assert.Throws<ArgumentException>(() => cache.Set("\uD800", [8]));
        Assert.True(cache.TryGet("\uFFFD", out NativeCacheLease lease));
        using (lease)
        {
            Assert.Equal([7], lease.Span.ToArray());
        }
    }

    [Fact]
    public void A_surrogate_pair_is_a_key_as_its_UTF8_bytes()
    {
        using var cache = new NativeCache(8 << 20);
        cache.Set("\uD83D\uDD11", [2]);
        Assert.True(cache.TryGet(Encoding.UTF8.GetBytes("\uD83D\uDD11"), out NativeCacheLease lease));
        using (lease)
        {
            Assert.Equal([2], lease.Span.ToArray());
        }
    }
}
