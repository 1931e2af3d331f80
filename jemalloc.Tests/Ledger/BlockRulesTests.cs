using jemalloc.Tests.Support;

namespace jemalloc.Tests.Ledger;

/// <summary>
/// The rules of a ledger block, tried on every structure built on it through the structure's public
/// API: an open lease holds off the structure's end (its free, dispose or its arena's reset), and in
/// checked mode the end of each structure quarantines its memory. <c>.ci/plant-lifetime-bugs</c>
/// plants a bug in the block's rules and checks that these (and each structure's own tests) notice it.
/// </summary>
[Collection(LeakChecked.Name)]
public sealed class BlockRulesTests : LeakCheckedTest
{
    public static TheoryData<string> LeasedStructures =>
        ["FixedBuffer", "SafeArray", "HugeArray", "FixedUtf8String", "Utf8StringStore", "NativeHashIndex", "JemArena"];

    public static TheoryData<string> Structures =>
        ["FixedBuffer", "SafeArray", "HugeArray", "FixedUtf8String", "NativeBufferWriter", "NativeMemoryStream", "JemMemoryPool", "Utf8StringStore", "NativeHashIndex", "JemArena"];

    [Theory]
    [MemberData(nameof(LeasedStructures))]
    public void An_open_lease_refuses_the_structure_s_end_and_its_close_lets_it_through(string structure)
    {
        switch (structure)
        {
            case "FixedBuffer":
            {
                var buffer = new FixedBuffer<int>(1024);
                using (MemoryLease<int> lease = buffer.Lease())
                {
                    Assert.Throws<InvalidOperationException>(buffer.Free);
                    Assert.True(buffer.IsValid);
                }

                buffer.Free();
                Assert.False(buffer.IsValid);
                break;
            }

            case "SafeArray":
            {
                var array = new SafeArray<int>(1024);
                using (MemoryLease<int> lease = array.Lease())
                {
                    Assert.Throws<InvalidOperationException>(array.Dispose);
                    Assert.True(array.IsValid);
                }

                array.Dispose();
                Assert.False(array.IsValid);
                break;
            }

            case "HugeArray":
            {
                var array = new HugeArray<int>(1024);
                using (MemoryHold hold = array.Hold())
                {
                    Assert.Throws<InvalidOperationException>(array.Dispose);
                    Assert.True(array.IsValid);
                }

                array.Dispose();
                Assert.False(array.IsValid);
                break;
            }

            case "FixedUtf8String":
            {
                var text = new FixedUtf8String("a string with a lease open on it");
                using (ReadOnlyMemoryLease<byte> lease = text.Lease())
                {
                    Assert.Throws<InvalidOperationException>(text.Free);
                    Assert.True(text.IsValid);
                }

                text.Free();
                Assert.False(text.IsValid);
                break;
            }

            case "Utf8StringStore":
            {
                // A read scope leases the store's anchor block in its arena: the arena's reset waits for it.
                using var arena = new JemArena();
                using var store = new Utf8StringStore(4096, arena.Options);
                StoredUtf8String value = store.Add("read under a scope");
                using (StringStoreReadScope scope = store.EnterRead())
                {
                    Assert.Throws<InvalidOperationException>(arena.Reset);
                    Assert.Equal("read under a scope", value.ToString());
                }

                arena.Reset();
                Assert.False(value.IsValid);
                break;
            }

            case "NativeHashIndex":
            {
                // A lookup leases the index's table while it compares keys: a reset of its arena from
                // inside the comparison is refused, and the lookup completes.
                using var arena = new JemArena();
                using var index = new NativeHashIndex<CallbackKey>(16, arena.Options);
                index.Add(new CallbackKey(42), 4200);
                CallbackKey.OnEquals = arena.Reset;
                try
                {
                    Assert.Throws<InvalidOperationException>(() => index.TryGetValue(new CallbackKey(42), out _));
                }
                finally
                {
                    CallbackKey.OnEquals = null;
                }

                Assert.True(index.TryGetValue(new CallbackKey(42), out long value));
                Assert.Equal(4200, value);
                break;
            }

            case "JemArena":
            {
                using var arena = new JemArena();
                SafeArray<int> array = arena.CreateArray<int>(1024);
                using (MemoryLease<int> lease = array.Lease())
                {
                    Assert.Throws<InvalidOperationException>(arena.Reset);
                    Assert.True(array.IsValid);
                }

                arena.Reset();
                Assert.False(array.IsValid);
                array.Dispose();
                break;
            }

            default:
                throw new ArgumentOutOfRangeException(nameof(structure), structure, "no such structure in this test");
        }
    }

    [Theory]
    [MemberData(nameof(Structures))]
    public void In_checked_mode_the_structure_s_end_quarantines_its_memory(string structure)
    {
        using CheckedModeScope scope = CheckedModeScope.On();
        AllocationLedger.FlushQuarantine();
        Assert.Equal(0, AllocationLedger.QuarantinedBytes);

        long freed = EndOne(structure);

        Assert.True(AllocationLedger.QuarantinedBytes >= freed, $"{structure}: {AllocationLedger.QuarantinedBytes:N0} bytes quarantined after freeing {freed:N0}");
        AllocationLedger.FlushQuarantine();
    }

    [Theory]
    [InlineData("NativeBufferWriter")]
    [InlineData("NativeMemoryStream")]
    public void In_checked_mode_a_resize_keeps_every_written_byte(string structure)
    {
        // Checked mode moves a block on every resize and poisons the old one, so a structure that kept
        // using the old address after a growth (the stream) or a shrink (the writer's hand-over) would
        // read poison where its first bytes were.
        using CheckedModeScope scope = CheckedModeScope.On();
        const int Total = 1 << 20;
        byte[] chunk = new byte[1000];
        byte[] back = new byte[Total];
        switch (structure)
        {
            case "NativeBufferWriter":
            {
                using var writer = new NativeBufferWriter<byte>(16);
                for (int written = 0; written < Total; written += chunk.Length)
                {
                    int length = Math.Min(chunk.Length, Total - written);
                    Span<byte> span = writer.GetSpan(length);
                    Pattern(span[..length], written);
                    writer.Advance(length);
                }

                // The hand-over shrinks the block to the written bytes: a resize, under the writer's lease.
                using HugeArray<byte> array = writer.DetachToHugeArray();
                using (MemoryLease<byte> lease = array.Lease())
                {
                    lease.Span.CopyTo(back);
                }

                break;
            }

            case "NativeMemoryStream":
            {
                using var stream = new NativeMemoryStream(16);
                for (int written = 0; written < Total; written += chunk.Length)
                {
                    int length = Math.Min(chunk.Length, Total - written);
                    Pattern(chunk.AsSpan(0, length), written);
                    stream.Write(chunk, 0, length);
                }

                stream.Position = 0;
                stream.ReadExactly(back);
                break;
            }

            default:
                throw new ArgumentOutOfRangeException(nameof(structure), structure, "no such structure in this test");
        }

        byte[] expected = new byte[Total];
        Pattern(expected, 0);
        int first = FirstDifference(back, expected);
        Assert.True(first < 0, $"{structure}: byte {first:N0} of {Total:N0} is {back[Math.Max(first, 0)]}, not {expected[Math.Max(first, 0)]}");
        AllocationLedger.FlushQuarantine();
    }

    private static void Pattern(Span<byte> span, int offset)
    {
        for (int i = 0; i < span.Length; i++)
        {
            span[i] = (byte)((offset + i) * 7 / 3);
        }
    }

    private static int FirstDifference(byte[] actual, byte[] expected)
    {
        int common = actual.AsSpan().CommonPrefixLength(expected);
        return common == expected.Length ? -1 : common;
    }

    // Makes one structure, uses it, ends it; returns the fewest bytes its end must have quarantined.
    private static long EndOne(string structure)
    {
        switch (structure)
        {
            case "FixedBuffer":
                new FixedBuffer<int>(1024).Free();
                return 4096;
            case "SafeArray":
                new SafeArray<int>(1024).Dispose();
                return 4096;
            case "HugeArray":
                new HugeArray<int>(1024).Dispose();
                return 4096;
            case "FixedUtf8String":
                new FixedUtf8String(new string('q', 1000)).Free();
                return 1000;
            case "NativeBufferWriter":
            {
                var writer = new NativeBufferWriter<byte>(4096);
                writer.GetSpan(4096).Fill(7);
                writer.Advance(4096);
                writer.Dispose();
                return 4096;
            }

            case "NativeMemoryStream":
            {
                var stream = new NativeMemoryStream(4096);
                stream.Write(new byte[4096]);
                stream.Dispose();
                return 4096;
            }

            case "JemMemoryPool":
            {
                // Checked mode keeps no returned block: each goes to the quarantine.
                using var pool = new JemMemoryPool();
                pool.Rent(4096).Dispose();
                return 4096;
            }

            case "Utf8StringStore":
            {
                var store = new Utf8StringStore();
                _ = store.Add(new string('s', 2000));
                store.Dispose();
                return 2000;
            }

            case "NativeHashIndex":
            {
                var index = new NativeHashIndex<long>();
                for (long key = 0; key < 1000; key++)
                {
                    index.Add(key, key);
                }

                index.Dispose();
                return 1000 * sizeof(long);
            }

            case "JemArena":
            {
                using var arena = new JemArena();
                arena.CreateArray<int>(1024).Dispose();
                return 4096;
            }

            default:
                throw new ArgumentOutOfRangeException(nameof(structure), structure, "no such structure in this test");
        }
    }

    /// <summary>A key whose comparison runs a callback, to act from inside an index's lookup.</summary>
    public readonly struct CallbackKey(long value) : IEquatable<CallbackKey>
    {
        internal static Action? OnEquals { get; set; }

        public long Value { get; } = value;

        public bool Equals(CallbackKey other)
        {
            OnEquals?.Invoke();
            return Value == other.Value;
        }

        public override bool Equals(object? obj) => obj is CallbackKey other && Equals(other);

        public override int GetHashCode() => Value.GetHashCode();

        public static bool operator ==(CallbackKey left, CallbackKey right) => left.Equals(right);

        public static bool operator !=(CallbackKey left, CallbackKey right) => !left.Equals(right);
    }
}
