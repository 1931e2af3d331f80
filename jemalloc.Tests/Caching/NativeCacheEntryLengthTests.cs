using System.Buffers;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.Caching;

/// <summary>
/// An entry over <see cref="NativeCache.MaxEntryLength"/> is refused whatever the budget, with a message
/// giving that limit; one within it but over the budget is refused giving the budget's. The values are
/// sequences of one small array repeated, so nothing near their length is allocated.
/// </summary>
[Collection(LeakChecked.Name)]
public sealed class NativeCacheEntryLengthTests : LeakCheckedTest
{
    private const int Header = 16;

    // A public const is compiled into its callers: a change to it must be deliberate, so its value is pinned.
    [Fact]
    public void The_published_limit_does_not_change_unnoticed() =>
        Assert.Equal(2_143_289_336, NativeCache.MaxEntryLength);

    [Fact]
    public void A_value_of_3_GiB_is_refused_by_a_cache_of_8_GiB_naming_the_largest_entry_not_the_budget()
    {
        using var cache = new NativeCache(8L << 30);
        ArgumentException refused = Assert.Throws<ArgumentException>(() => cache.Set("big"u8, Repeated(3L << 30)));
        Assert.Equal("value", refused.ParamName);
        Assert.Contains("3,221,225,472-byte value", refused.Message, StringComparison.Ordinal);
        Assert.Contains("an entry is at most 2,143,289,336 bytes (NativeCache.MaxEntryLength), whatever the budget", refused.Message, StringComparison.Ordinal);
        Assert.DoesNotContain("budget of", refused.Message, StringComparison.Ordinal);
        Assert.Equal(0, cache.Count);
        Assert.Equal(0, cache.GetStatistics().Writes);
    }

    [Theory]
    [InlineData(0, false)]
    [InlineData(3, false)]
    [InlineData(0, true)]
    public void An_entry_one_eighth_over_the_limit_is_refused_for_its_length_and_one_at_it_for_the_budget(int keyLength, bool expires)
    {
        // A budget of 1 GiB: the entry at the limit is refused for the budget, so nothing is written.
        using var cache = new NativeCache(1L << 30);
        byte[] key = new byte[keyLength];
        NativeCacheEntryOptions options = expires ? new NativeCacheEntryOptions { AbsoluteExpirationRelativeToNow = TimeSpan.FromHours(1) } : default;
        int expiryBytes = expires ? 8 : 0;
        long atLimit = NativeCache.MaxEntryLength - Header - expiryBytes - keyLength;

        ArgumentException overBudget = Assert.Throws<ArgumentException>(() => cache.Set(key, Repeated(atLimit), options));
        Assert.Equal("value", overBudget.ParamName);
        Assert.Contains($"The entry takes {NativeCache.MaxEntryLength:N0} bytes", overBudget.Message, StringComparison.Ordinal);
        Assert.Contains("the cache's budget of 1,073,741,824 bytes has room for at most", overBudget.Message, StringComparison.Ordinal);

        ArgumentException tooLong = Assert.Throws<ArgumentException>(() => cache.Set(key, Repeated(atLimit + 1), options));
        Assert.Equal("value", tooLong.ParamName);
        Assert.Contains($"The entry takes {NativeCache.MaxEntryLength + 8L:N0} bytes", tooLong.Message, StringComparison.Ordinal);
        Assert.Contains("NativeCache.MaxEntryLength", tooLong.Message, StringComparison.Ordinal);
        Assert.DoesNotContain("budget of", tooLong.Message, StringComparison.Ordinal);
        Assert.Equal(0, cache.Count);
    }

    // A sequence of `length` bytes: one 1 MiB array over and over (and a shorter piece of it last).
    private static ReadOnlySequence<byte> Repeated(long length)
    {
        byte[] chunk = new byte[1 << 20];
        var first = new Piece(chunk.AsMemory(0, (int)Math.Min(chunk.Length, length)), 0);
        Piece last = first;
        for (long at = last.Memory.Length; at < length; at += last.Memory.Length)
        {
            last = last.Append(chunk.AsMemory(0, (int)Math.Min(chunk.Length, length - at)));
        }

        return new ReadOnlySequence<byte>(first, 0, last, last.Memory.Length);
    }

    private sealed class Piece : ReadOnlySequenceSegment<byte>
    {
        internal Piece(ReadOnlyMemory<byte> memory, long runningIndex)
        {
            Memory = memory;
            RunningIndex = runningIndex;
        }

        internal Piece Append(ReadOnlyMemory<byte> memory)
        {
            var next = new Piece(memory, RunningIndex + Memory.Length);
            Next = next;
            return next;
        }
    }
}
