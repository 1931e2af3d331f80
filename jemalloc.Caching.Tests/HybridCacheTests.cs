using System.Buffers;
using System.Buffers.Binary;
using System.Diagnostics;
using System.Text;
using Microsoft.Extensions.Caching.Distributed;
using Microsoft.Extensions.Caching.Hybrid;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Time.Testing;

namespace jemalloc.Caching.Tests;

/// <summary>
/// A real HybridCache (Microsoft.Extensions.Caching.Hybrid), built by the container, with our cache as
/// its second level. Two HybridCache instances over one NativeCache stand for two servers over one
/// Redis: what one writes through its L2, the other, whose L1 is empty, reads.
/// </summary>
public sealed class HybridCacheTests : IDisposable
{
    private static readonly DistributedCacheEntryOptions NoExpiry = new();
    private readonly List<ServiceProvider> _providers = [];

    public void Dispose()
    {
        // The providers that wrap the shared cache first, its owner last.
        for (int i = _providers.Count - 1; i >= 0; i--)
        {
            _providers[i].Dispose();
        }
    }

    /// <summary>The first server: HybridCache over the cache AddNativeDistributedCache registers (and owns).</summary>
    private (HybridCache Hybrid, NativeCache Shared) Owner(TimeProvider? clock = null, Action<IHybridCacheBuilder>? configure = null)
    {
        ServiceProvider provider = Build(services => services.AddNativeDistributedCache(o => o.BudgetBytes = 32L << 20), clock, configure);
        return (provider.GetRequiredService<HybridCache>(), provider.GetRequiredService<NativeDistributedCache>().Cache);
    }

    /// <summary>Another server: its own HybridCache (empty L1) over the same NativeCache.</summary>
    private HybridCache Other(NativeCache shared, TimeProvider? clock = null, Action<IHybridCacheBuilder>? configure = null) =>
        Build(services => services.AddSingleton<IDistributedCache>(new NativeDistributedCache(shared)), clock, configure).GetRequiredService<HybridCache>();

    private ServiceProvider Build(Action<IServiceCollection> addL2, TimeProvider? clock, Action<IHybridCacheBuilder>? configure)
    {
        var services = new ServiceCollection();
        if (clock is not null)
        {
            services.AddSingleton(clock);
        }

        addL2(services);
        IHybridCacheBuilder builder = services.AddHybridCache();
        configure?.Invoke(builder);
        ServiceProvider provider = services.BuildServiceProvider();
        _providers.Add(provider);
        return provider;
    }

    private static Func<CancellationToken, ValueTask<T>> Never<T>(string why) => _ => throw new InvalidOperationException(why);

    // HybridCache may finish its L2 write after handing the value back; the other server reads once it is there.
    private static async Task WaitForEntry(NativeCache cache, string key)
    {
        byte[] utf8 = Encoding.UTF8.GetBytes(key);
        var waited = Stopwatch.StartNew();
        while (!cache.ContainsKey(utf8))
        {
            Assert.True(waited.Elapsed < TimeSpan.FromSeconds(30), $"HybridCache never wrote '{key}' to the second level.");
            await Task.Delay(10);
        }
    }

    [Fact]
    public async Task A_value_made_by_one_HybridCache_is_read_by_another_through_the_native_second_level()
    {
        (HybridCache first, NativeCache shared) = Owner();
        int calls = 0;
        string made = await first.GetOrCreateAsync("user:42", _ => { calls++; return ValueTask.FromResult("Ada Lovelace"); });
        Assert.Equal("Ada Lovelace", made);
        await WaitForEntry(shared, "user:42");

        HybridCache second = Other(shared);
        Assert.Equal("Ada Lovelace", await second.GetOrCreateAsync("user:42", Never<string>("the second server must read the first one's value from the L2")));
        Assert.Equal("Ada Lovelace", await first.GetOrCreateAsync("user:42", Never<string>("the first server has it in its L1")));
        Assert.Equal(1, calls);
    }

    [Fact]
    public async Task A_custom_serializer_writes_its_own_bytes_into_the_native_cache_and_reads_them_back()
    {
        var firstSerializer = new ReadingSerializer();
        var secondSerializer = new ReadingSerializer();
        (HybridCache first, NativeCache shared) = Owner(configure: b => b.AddSerializer(firstSerializer));
        var reading = new Reading(7, 21.5, "°C");
        await first.SetAsync("reading:7", reading);
        await WaitForEntry(shared, "reading:7");
        Assert.Equal(1, firstSerializer.Serialized);

        // The L2 payload is HybridCache's envelope around the serializer's bytes.
        byte[] stored = shared.GetBytes("reading:7"u8)!;
        Assert.True(stored.AsSpan().IndexOf(ReadingSerializer.Magic) >= 0, "the serializer's bytes are not in the native cache's value");

        HybridCache second = Other(shared, configure: b => b.AddSerializer(secondSerializer));
        Reading read = await second.GetOrCreateAsync("reading:7", Never<Reading>("the second server must deserialize the L2 value"));
        Assert.Equal(reading, read);
        Assert.Equal(1, secondSerializer.Deserialized);
    }

    [Fact]
    public async Task An_entry_expires_from_the_second_level_on_the_clock_HybridCache_and_the_cache_share()
    {
        var clock = new FakeTimeProvider(new DateTimeOffset(2026, 6, 1, 12, 0, 0, TimeSpan.Zero));
        (HybridCache first, NativeCache shared) = Owner(clock);
        var minute = new HybridCacheEntryOptions { Expiration = TimeSpan.FromMinutes(1), LocalCacheExpiration = TimeSpan.FromMinutes(1) };
        await first.GetOrCreateAsync("price", _ => ValueTask.FromResult(100m), minute);
        await WaitForEntry(shared, "price");

        clock.Advance(TimeSpan.FromSeconds(50));
        Assert.Equal(100m, await Other(shared, clock).GetOrCreateAsync("price", Never<decimal>("the entry has ten seconds left"), minute));

        clock.Advance(TimeSpan.FromSeconds(11));
        Assert.False(shared.ContainsKey("price"u8));
        Assert.Equal(200m, await Other(shared, clock).GetOrCreateAsync("price", _ => ValueTask.FromResult(200m), minute));
    }

    [Fact]
    public async Task RemoveAsync_takes_the_entry_out_of_the_native_cache_for_every_server()
    {
        (HybridCache first, NativeCache shared) = Owner();
        await first.GetOrCreateAsync("session:1", _ => ValueTask.FromResult("alive"));
        await WaitForEntry(shared, "session:1");
        await first.RemoveAsync("session:1");
        Assert.False(shared.ContainsKey("session:1"u8));
        Assert.Equal("made again", await Other(shared).GetOrCreateAsync("session:1", _ => ValueTask.FromResult("made again")));

        // The first server's L1 let it go too: it reads what the other one made, from the L2.
        await WaitForEntry(shared, "session:1");
        Assert.Equal("made again", await first.GetOrCreateAsync("session:1", Never<string>("the other server's value is in the L2")));
    }

    [Fact]
    public async Task RemoveByTagAsync_leaves_its_mark_in_the_native_cache_and_every_server_drops_the_tagged_entries()
    {
        (HybridCache first, NativeCache shared) = Owner();
        await first.GetOrCreateAsync("order:1", _ => ValueTask.FromResult("first order"), tags: ["orders", "customer:9"]);
        await first.GetOrCreateAsync("invoice:1", _ => ValueTask.FromResult("first invoice"), tags: ["invoices"]);
        await WaitForEntry(shared, "order:1");
        await WaitForEntry(shared, "invoice:1");

        await first.RemoveByTagAsync("orders");

        // HybridCache keeps a tag's invalidation time in the L2, under its own key, as 8 bytes.
        byte[]? mark = shared.GetBytes("__MSFT_HCT__orders"u8);
        Assert.NotNull(mark);
        Assert.Equal(sizeof(long), mark.Length);
        Assert.True(BinaryPrimitives.ReadInt64LittleEndian(mark) > 0);

        // The tagged entry's bytes are still in the L2, but no server takes them.
        byte[] dropped = shared.GetBytes("order:1"u8)!;
        HybridCache second = Other(shared);
        Assert.Equal("second order", await second.GetOrCreateAsync("order:1", _ => ValueTask.FromResult("second order"), tags: ["orders"]));
        Assert.Equal("first invoice", await second.GetOrCreateAsync("invoice:1", Never<string>("the invoice's tag was not removed"), tags: ["invoices"]));

        // The value made after the removal is newer than the mark: the first server takes it from the L2.
        var waited = Stopwatch.StartNew();
        while (shared.GetBytes("order:1"u8) is not { } current || current.AsSpan().SequenceEqual(dropped))
        {
            Assert.True(waited.Elapsed < TimeSpan.FromSeconds(30), "HybridCache never wrote the new order to the second level.");
            await Task.Delay(10);
        }

        Assert.Equal("second order", await first.GetOrCreateAsync("order:1", Never<string>("the second server's newer value is in the L2"), tags: ["orders"]));
    }

    [Fact]
    public async Task HybridCache_takes_the_buffer_path_when_its_second_level_offers_it()
    {
        using var shared = new NativeCache(32L << 20);
        var firstL2 = new RecordingCache(new NativeDistributedCache(shared));
        var secondL2 = new RecordingCache(new NativeDistributedCache(shared));
        HybridCache first = Build(s => s.AddSingleton<IDistributedCache>(firstL2), null, null).GetRequiredService<HybridCache>();
        HybridCache second = Build(s => s.AddSingleton<IDistributedCache>(secondL2), null, null).GetRequiredService<HybridCache>();

        await first.GetOrCreateAsync("k", _ => ValueTask.FromResult(new string('x', 5000)));
        await WaitForEntry(shared, "k");
        Assert.Equal(new string('x', 5000), await second.GetOrCreateAsync("k", Never<string>("the value is in the L2")));

        Assert.True(firstL2.SequenceWrites >= 1, "HybridCache did not write through IBufferDistributedCache.SetAsync");
        Assert.True(secondL2.BufferReads >= 1, "HybridCache did not read through IBufferDistributedCache.TryGetAsync");
        Assert.Equal(0, firstL2.ArrayCalls + secondL2.ArrayCalls);

        // And what AddNativeDistributedCache registers is that buffer cache, as IDistributedCache.
        using ServiceProvider registered = new ServiceCollection().AddNativeDistributedCache(o => o.BudgetBytes = 8L << 20).BuildServiceProvider();
        Assert.IsAssignableFrom<IBufferDistributedCache>(registered.GetRequiredService<IDistributedCache>());
    }

    private sealed record Reading(int Sensor, double Value, string Unit);

    /// <summary>A serializer of its own format: a magic word, then the fields in binary.</summary>
    private sealed class ReadingSerializer : IHybridCacheSerializer<Reading>
    {
        internal static ReadOnlySpan<byte> Magic => "RDG1"u8;

        internal int Serialized { get; private set; }

        internal int Deserialized { get; private set; }

        public void Serialize(Reading value, IBufferWriter<byte> target)
        {
            Serialized++;
            byte[] unit = Encoding.UTF8.GetBytes(value.Unit);
            Span<byte> span = target.GetSpan(16 + unit.Length);
            Magic.CopyTo(span);
            BinaryPrimitives.WriteInt32LittleEndian(span[4..], value.Sensor);
            BinaryPrimitives.WriteDoubleLittleEndian(span[8..], value.Value);
            unit.CopyTo(span[16..]);
            target.Advance(16 + unit.Length);
        }

        public Reading Deserialize(ReadOnlySequence<byte> source)
        {
            Deserialized++;
            byte[] bytes = source.ToArray();
            Assert.True(bytes.AsSpan(0, 4).SequenceEqual(Magic));
            return new Reading(
                BinaryPrimitives.ReadInt32LittleEndian(bytes.AsSpan(4)),
                BinaryPrimitives.ReadDoubleLittleEndian(bytes.AsSpan(8)),
                Encoding.UTF8.GetString(bytes, 16, bytes.Length - 16));
        }
    }

    /// <summary>Our cache with a count of which of its paths a caller takes.</summary>
    private sealed class RecordingCache(NativeDistributedCache inner) : IBufferDistributedCache
    {
        private int _arrayCalls, _bufferReads, _sequenceWrites;

        internal int ArrayCalls => _arrayCalls;

        internal int BufferReads => _bufferReads;

        internal int SequenceWrites => _sequenceWrites;

        public byte[]? Get(string key) => Array(() => inner.Get(key));

        public Task<byte[]?> GetAsync(string key, CancellationToken token = default) => Array(() => inner.GetAsync(key, token));

        public void Set(string key, byte[] value, DistributedCacheEntryOptions options) => Array(() => { inner.Set(key, value, options); return 0; });

        public Task SetAsync(string key, byte[] value, DistributedCacheEntryOptions options, CancellationToken token = default) => Array(() => inner.SetAsync(key, value, options, token));

        public void Refresh(string key) => inner.Refresh(key);

        public Task RefreshAsync(string key, CancellationToken token = default) => inner.RefreshAsync(key, token);

        public void Remove(string key) => inner.Remove(key);

        public Task RemoveAsync(string key, CancellationToken token = default) => inner.RemoveAsync(key, token);

        public bool TryGet(string key, IBufferWriter<byte> destination)
        {
            Interlocked.Increment(ref _bufferReads);
            return inner.TryGet(key, destination);
        }

        public ValueTask<bool> TryGetAsync(string key, IBufferWriter<byte> destination, CancellationToken token = default)
        {
            Interlocked.Increment(ref _bufferReads);
            return inner.TryGetAsync(key, destination, token);
        }

        public void Set(string key, ReadOnlySequence<byte> value, DistributedCacheEntryOptions options)
        {
            Interlocked.Increment(ref _sequenceWrites);
            inner.Set(key, value, options);
        }

        public ValueTask SetAsync(string key, ReadOnlySequence<byte> value, DistributedCacheEntryOptions options, CancellationToken token = default)
        {
            Interlocked.Increment(ref _sequenceWrites);
            return inner.SetAsync(key, value, options, token);
        }

        private T Array<T>(Func<T> call)
        {
            Interlocked.Increment(ref _arrayCalls);
            return call();
        }
    }
}
