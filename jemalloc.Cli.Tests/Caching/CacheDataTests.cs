using jemalloc.Benchmarks.Infrastructure;
using jemalloc.Cli.Caching;

namespace jemalloc.Cli.Tests.Caching;

/// <summary>The keys, values, lifetimes and their check that every side of <c>jembench cache</c> shares.</summary>
public class CacheDataTests
{
    private static readonly CacheKeySpace Space = Versioned(new CacheKeySpace(1_000, 1_000, smallValues: false));

    [Fact]
    public void Keys_are_distinct_16_to_40_ascii_bytes_and_the_same_as_bytes_and_as_strings()
    {
        var seen = new HashSet<string>();
        Span<byte> bytes = stackalloc byte[CacheData.MaxKeyLength];
        for (int i = 0; i < 100_000; i++)
        {
            int length = CacheData.WriteKey(i, bytes);
            string key = CacheData.KeyString(i);
            Assert.InRange(length, CacheData.MinKeyLength, CacheData.MaxKeyLength);
            Assert.Equal(System.Text.Encoding.ASCII.GetString(bytes[..length]), key);
            Assert.True(seen.Add(key), $"key {i} repeats");
        }

        Assert.Equal(CacheData.MinKeyLength, Enumerable.Range(0, 10_000).Min(CacheData.KeyLength));
        Assert.Equal(CacheData.MaxKeyLength, Enumerable.Range(0, 10_000).Max(CacheData.KeyLength));
    }

    [Fact]
    public void Server_values_are_log_normal_with_the_median_and_p99_asked_for()
    {
        int[] lengths = [.. Enumerable.Range(0, 200_000).Select(CacheData.ServerValueLength).Order()];
        Assert.InRange(lengths[lengths.Length / 2], 190, 210);
        Assert.InRange(lengths[(int)(lengths.Length * 0.99)], 3_700, 4_500);
        Assert.True(lengths[0] >= CacheData.MinValueLength && lengths[^1] <= CacheData.MaxValueLength);
    }

    [Fact]
    public void Thirty_percent_of_the_keys_live_1_to_5_seconds()
    {
        TimeSpan[] lifetimes = [.. Enumerable.Range(0, 100_000).Select(CacheData.Lifetime)];
        TimeSpan[] expiring = [.. lifetimes.Where(l => l > TimeSpan.Zero)];
        Assert.InRange(expiring.Length, 29_000, 31_000);
        Assert.Equal(TimeSpan.FromSeconds(1), expiring.Min());
        Assert.Equal(TimeSpan.FromSeconds(5), expiring.Max());
    }

    [Fact]
    public void A_value_written_for_a_key_passes_its_check()
    {
        byte[] value = new byte[Space.ValueLength(7)];
        CacheData.WriteValue(value, 7, 2);
        CacheData.Check("test", Space, 7, value);
    }

    [Fact]
    public void Another_keys_value_fails()
    {
        byte[] value = new byte[Space.ValueLength(8)];
        CacheData.WriteValue(value, 8, 1);
        BenchmarkVerificationException e = Assert.Throws<BenchmarkVerificationException>(() => CacheData.Check("test", Space, 7, value));
        Assert.Contains("cache (test): the value read for key 7 was written for key 8", e.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(0)]
    [InlineData(3)]
    public void A_version_never_written_fails(int version)
    {
        byte[] value = new byte[Space.ValueLength(7)];
        CacheData.WriteValue(value, 7, version);
        BenchmarkVerificationException e = Assert.Throws<BenchmarkVerificationException>(() => CacheData.Check("test", Space, 7, value));
        Assert.Contains($"has version {version}, which was never written (versions 1 to 2 were)", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_value_of_another_length_fails()
    {
        byte[] value = new byte[Space.ValueLength(7) + 1];
        CacheData.WriteValue(value, 7, 1);
        Assert.Throws<BenchmarkVerificationException>(() => CacheData.Check("test", Space, 7, value));
        Assert.Throws<BenchmarkVerificationException>(() => CacheData.Check("test", Space, 7, new byte[CacheData.MinValueLength - 1]));
    }

    [Theory]
    [InlineData(0)]
    [InlineData(12)]
    [InlineData(-1)]
    public void A_changed_byte_of_the_header_or_the_check_fails(int position)
    {
        byte[] value = new byte[Space.ValueLength(7)];
        CacheData.WriteValue(value, 7, 1);
        value[position < 0 ? value.Length - 1 : position] ^= 0x10;
        Assert.Throws<BenchmarkVerificationException>(() => CacheData.Check("test", Space, 7, value));
    }

    [Fact]
    public void Zipf_draws_stay_in_range_and_favour_few_keys()
    {
        var zipf = new ZipfSampler(10_000, 0.99);
        int[] stream = CacheStreams.Make(zipf, 200_000, 0, 1);
        Assert.All(stream, k => Assert.InRange(k, 0, 9_999));
        int[] counts = new int[10_000];
        foreach (int k in stream)
        {
            counts[k]++;
        }

        int[] sorted = [.. counts.OrderDescending()];
        // Zipf 0.99 over 10,000 keys: the top 1% draws about half of the reads.
        Assert.InRange(sorted.Take(100).Sum() / 200_000.0, 0.40, 0.65);
        Assert.Equal(stream, CacheStreams.Make(zipf, 200_000, 0, 1));
        Assert.NotEqual(stream, CacheStreams.Make(zipf, 200_000, 0, 2));
    }

    [Fact]
    public void A_stream_has_the_share_of_writes_asked_for()
    {
        int[] stream = CacheStreams.Make(new ZipfSampler(1_000, 0.99), 100_000, 0.05, 3);
        Assert.InRange(stream.Count(op => op < 0), 4_500, 5_500);
        Assert.Throws<ArgumentOutOfRangeException>(() => CacheStreams.Make(new ZipfSampler(1_000, 0.99), 1, 1.5, 3));
        Assert.Throws<ArgumentOutOfRangeException>(() => new ZipfSampler(1_000, 1.0));
        Assert.Throws<ArgumentOutOfRangeException>(() => new ZipfSampler(1, 0.5));
    }

    [Fact]
    public void The_capacity_gives_the_native_budget_what_the_entry_count_takes_at_48_bytes_over()
    {
        var space = new CacheKeySpace(10_000, 10_000, smallValues: false);
        CacheCapacity capacity = CacheCapacity.For(space, 5_000);
        Assert.Equal(5_000, capacity.Entries);
        Assert.Equal((long)Math.Ceiling(5_000 * (space.MeanEntryBytes + 48)), capacity.BudgetBytes);
        Assert.Equal((long)Math.Ceiling(5_000 * space.MeanEntryBytes), capacity.SizeLimit);
        Assert.InRange(space.MeanEntryBytes, 400, 600);
        Assert.Equal(NativeCache.MinimumBudgetBytes, CacheCapacity.For(new CacheKeySpace(500, 500, smallValues: true), 500).BudgetBytes);
    }

    private static CacheKeySpace Versioned(CacheKeySpace space)
    {
        _ = space.NextVersion(7);
        _ = space.NextVersion(7);
        return space;
    }
}
