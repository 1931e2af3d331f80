using System.Text;
using jemalloc.Records;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.Records;

[Collection(LeakChecked.Name)]
public sealed class Utf8StringStoreTests : LeakCheckedTest
{
    [Theory]
    [InlineData("")]
    [InlineData("hello")]
    [InlineData("héllo wörld")]
    [InlineData("日本語テキスト")]
    [InlineData("emoji 😀 and 𝄞")]
    public void Round_trips_a_string_with_its_utf8_length(string text)
    {
        using var store = new Utf8StringStore();
        StoredUtf8String s = store.Add(text);
        Assert.Equal(text, s.ToString());
        Assert.Equal(Encoding.UTF8.GetByteCount(text), s.Length);
        Assert.Equal(Encoding.UTF8.GetBytes(text), s.ToArray());
        Assert.True(s.Equals(text));
        Assert.True(s.Equals(Encoding.UTF8.GetBytes(text)));
        Assert.True(s.IsValid);
    }

    [Fact]
    public void Packs_many_strings_into_few_ledger_entries()
    {
        long before = AllocationLedger.LiveCount;
        using var store = new Utf8StringStore(Utf8StringStore.MinBlockSize, AllocationOptions.Default);
        var values = new StoredUtf8String[10_000];
        for (int i = 0; i < values.Length; i++)
        {
            values[i] = store.Add($"name-{i}-é");
        }

        long bytes = values.Sum(v => (long)v.Length);
        Assert.Equal(bytes, store.UsedBytes);
        Assert.Equal(values.Length, store.Count);
        Assert.Equal(store.BlockCount, AllocationLedger.LiveCount - before);
        // Each string also takes its header (a marker and, below 64 bytes, one length byte), and
        // each block its 4-byte written count.
        long packed = bytes + (2L * values.Length);
        const int usable = Utf8StringStore.MinBlockSize - 4;
        Assert.InRange(store.BlockCount, packed / usable, (packed / usable) + 2);
        Assert.Equal((long)store.BlockCount * Utf8StringStore.MinBlockSize, store.ReservedBytes);
        for (int i = 0; i < values.Length; i++)
        {
            Assert.Equal($"name-{i}-é", values[i].ToString());
        }

        Assert.Equal(store.BlockCount, AllocationLedger.Snapshot().Count(a => a.Kind == AllocationKind.StringStoreBlock));
    }

    [Fact]
    public void A_string_longer_than_a_block_gets_a_block_of_its_own()
    {
        using var store = new Utf8StringStore(Utf8StringStore.MinBlockSize, AllocationOptions.Default);
        StoredUtf8String small = store.Add("small");
        string big = new('x', Utf8StringStore.MinBlockSize * 3);
        StoredUtf8String large = store.Add(big);
        StoredUtf8String after = store.Add("after");
        Assert.Equal(big, large.ToString());
        Assert.Equal("small", small.ToString());
        Assert.Equal("after", after.ToString());
        Assert.Equal(2, store.BlockCount);
    }

    [Fact]
    public void A_disposed_store_refuses_its_counts_as_every_other_member()
    {
        var store = new Utf8StringStore();
        store.Add("value");
        Assert.Equal(1, store.Count);
        Assert.Equal(5, store.UsedBytes);
        store.Dispose();
        DisposedMessages.AssertDisposed("Utf8StringStore", () => store.Count);
        DisposedMessages.AssertDisposed("Utf8StringStore", () => store.UsedBytes);
        DisposedMessages.AssertDisposed("Utf8StringStore", () => store.Add("again"));
    }

    [Fact]
    public void Reset_makes_every_value_and_copy_throw_and_frees_every_block()
    {
        long before = AllocationLedger.LiveCount;
        using var store = new Utf8StringStore(Utf8StringStore.MinBlockSize, AllocationOptions.Default);
        StoredUtf8String[] values = [.. Enumerable.Range(0, 2000).Select(i => store.Add($"value {i}"))];
        StoredUtf8String copy = values[1500];
        store.Reset();
        Assert.Equal(before, AllocationLedger.LiveCount);
        Assert.Equal(0, store.Count);
        Assert.Equal(0, store.BlockCount);
        Assert.False(copy.IsValid);
        SaysStoreGone(Assert.Throws<ObjectDisposedException>(() => copy.ToString()));
        Assert.Throws<ObjectDisposedException>(() => copy.Length);
        Assert.Throws<ObjectDisposedException>(() => copy.StartsWith("value"u8));
        Assert.Throws<ObjectDisposedException>(() => copy.Equals("value 1500"));
        Assert.Throws<ObjectDisposedException>(() => copy.CompareTo(values[0]));
        Assert.Throws<ObjectDisposedException>(() => copy.GetHashCode());
        Assert.Throws<ObjectDisposedException>(() => copy.CopyTo(new byte[64]));

        // The store is usable again, and new values in the same ledger slots do not revive old ones.
        StoredUtf8String fresh = store.Add("fresh");
        Assert.Equal("fresh", fresh.ToString());
        Assert.Throws<ObjectDisposedException>(() => values[0].ToString());
        Assert.False(store.Owns(values[0]));
        Assert.True(store.Owns(fresh));
    }

    [Fact]
    public void Dispose_frees_every_block_and_then_the_store_refuses_use()
    {
        long before = AllocationLedger.LiveCount;
        var store = new Utf8StringStore();
        StoredUtf8String value = store.Add("gone");
        store.Dispose();
        store.Dispose();
        Assert.True(store.IsDisposed);
        Assert.Equal(before, AllocationLedger.LiveCount);
        SaysStoreGone(Assert.Throws<ObjectDisposedException>(() => value.ToString()));
        DisposedMessages.AssertDisposed("Utf8StringStore", () => store.Add("x"));
        DisposedMessages.AssertDisposed("Utf8StringStore", () => store.Add("x"u8));
        DisposedMessages.AssertDisposed("Utf8StringStore", () => store.Reset());
        DisposedMessages.AssertDisposed("Utf8StringStore", () => store.EnterRead());
        DisposedMessages.AssertDisposed("Utf8StringStore", () => store.Replace(value, "y"));
    }

    // A value whose store was reset or disposed: its bytes were freed with the store's block, and the
    // message says so (the value itself was never disposed).
    private static void SaysStoreGone(ObjectDisposedException e)
    {
        Assert.Equal("StoredUtf8String", e.ObjectName);
        Assert.StartsWith("This StoredUtf8String's bytes were freed: its Utf8StringStore was reset or disposed", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Compares_and_tests_prefixes_on_the_utf8_bytes()
    {
        using var store = new Utf8StringStore();
        StoredUtf8String zoe = store.Add("Zoë Ångström");
        StoredUtf8String zoeAgain = store.Add("Zoë Ångström");
        StoredUtf8String adam = store.Add("Adam");
        Assert.True(zoe.StartsWith("Zoë"));
        Assert.True(zoe.StartsWith("Zoë"u8));
        Assert.True(zoe.StartsWith(""));
        Assert.False(zoe.StartsWith("Zoe"));
        Assert.False(zoe.StartsWith("Zoë Ångström and more"));
        Assert.False(zoe.StartsWith("\ud800"));
        Assert.True(zoe == zoeAgain);
        Assert.False(zoe.IsSameStorage(zoeAgain));
        StoredUtf8String copy = zoe;
        Assert.True(copy.IsSameStorage(zoe));
        Assert.Equal(zoe.GetHashCode(), zoeAgain.GetHashCode());
        Assert.True(zoe.Equals((object)zoeAgain));
        Assert.False(zoe.Equals("Zoe Angstrom"));
        Assert.False(zoe.Equals((string?)null));
        Assert.True(adam < zoe);
        Assert.True(zoe >= adam);
        Assert.Equal(Math.Sign(string.CompareOrdinal("Adam", "Zoë Ångström")), adam.CompareTo(zoe));
        Assert.Equal(0, adam.CompareTo("Adam"u8));
        Assert.True(adam != zoe);
        Assert.True(zoe.StartsWith(new string('Z', 1)));
        string longPrefix = new('é', 400);
        Assert.False(adam.StartsWith(longPrefix));
        StoredUtf8String longValue = store.Add(longPrefix + "tail");
        Assert.True(longValue.StartsWith(longPrefix));
        Assert.True(longValue.Equals(longPrefix + "tail"));
    }

    [Fact]
    public void Default_reads_as_the_empty_string_of_no_store()
    {
        using var store = new Utf8StringStore();
        StoredUtf8String none = default;
        Assert.True(none.IsDefault);
        Assert.False(none.IsValid);
        Assert.Equal(0, none.Length);
        Assert.Equal("", none.ToString());
        Assert.True(none.Equals(store.Add("")));
        Assert.False(store.Owns(none));
        Assert.Throws<ArgumentException>(() => store.Replace(none, "x"));
    }

    [Fact]
    public void Replace_stores_new_text_keeps_the_old_readable_and_counts_the_abandoned_bytes()
    {
        using var store = new Utf8StringStore();
        StoredUtf8String old = store.Add("first name");
        StoredUtf8String updated = store.Replace(old, "second");
        Assert.Equal("second", updated.ToString());
        Assert.Equal("first name", old.ToString());
        Assert.Equal(Encoding.UTF8.GetByteCount("first name"), store.AbandonedBytes);
        Assert.Equal(2, store.Count);
    }

    [Fact]
    public void Replacing_the_same_old_value_again_counts_its_bytes_once()
    {
        using var store = new Utf8StringStore();
        StoredUtf8String old = store.Add("first name");
        StoredUtf8String copy = old;
        StoredUtf8String second = store.Replace(old, "second");
        StoredUtf8String third = store.Replace(old, "third");
        _ = store.Replace(copy, "fourth");
        Assert.Equal(Encoding.UTF8.GetByteCount("first name"), store.AbandonedBytes);
        Assert.Equal("first name", old.ToString());
        Assert.Equal("second", second.ToString());
        _ = store.Replace(second, "fifth");
        _ = store.Replace(third, "sixth");
        Assert.Equal(Encoding.UTF8.GetByteCount("first name") + "second".Length + "third".Length, store.AbandonedBytes);
        Assert.Equal(6, store.Count);
        store.Reset();
        Assert.Equal(0, store.AbandonedBytes);
    }

    [Fact]
    public void Replacing_empty_and_block_sized_values_counts_each_once()
    {
        using var store = new Utf8StringStore(Utf8StringStore.MinBlockSize, AllocationOptions.Default);
        StoredUtf8String empty = store.Add("");
        string big = new('x', Utf8StringStore.MinBlockSize);
        StoredUtf8String large = store.Add(big);
        StoredUtf8String full = store.Add(new string('y', Utf8StringStore.MinBlockSize - 1));
        _ = store.Replace(empty, "a");
        _ = store.Replace(empty, "b");
        _ = store.Replace(large, "c");
        _ = store.Replace(large, "d");
        _ = store.Replace(full, "e");
        _ = store.Replace(full, "f");
        Assert.Equal((2L * Utf8StringStore.MinBlockSize) - 1, store.AbandonedBytes);
        Assert.Equal(big, large.ToString());
        Assert.Equal("", empty.ToString());
    }

    [Fact]
    public void Replace_refuses_a_value_of_another_store()
    {
        using var store = new Utf8StringStore();
        using var other = new Utf8StringStore();
        StoredUtf8String foreign = other.Add("foreign");
        ArgumentException e = Assert.Throws<ArgumentException>(() => store.Replace(foreign, "x"));
        Assert.Equal("old", e.ParamName);
        Assert.Throws<ArgumentNullException>(() => store.Replace(store.Add("a"), null!));
    }

    [Fact]
    public void Rejects_bad_input_with_argument_exceptions()
    {
        using var store = new Utf8StringStore();
        Assert.Throws<ArgumentNullException>(() => store.Add((string)null!));
        ArgumentException surrogate = Assert.Throws<ArgumentException>(() => store.Add("ab\ud800cd"));
        Assert.Contains("index 2", surrogate.Message, StringComparison.Ordinal);
        Assert.Throws<ArgumentException>(() => store.Add([0xC3, 0x28]));
        Assert.Throws<ArgumentNullException>(() => store.Add("a").StartsWith((string)null!));
        Assert.Throws<ArgumentException>(() => store.Add("abcdef").CopyTo(new byte[3]));
        Assert.Equal(0, store.Count - 2);
        Assert.Throws<ArgumentOutOfRangeException>(() => new Utf8StringStore(Utf8StringStore.MinBlockSize - 1, AllocationOptions.Default));
        Assert.Throws<ArgumentOutOfRangeException>(() => new Utf8StringStore(Utf8StringStore.MaxBlockSize + 1, AllocationOptions.Default));
    }

    [Theory]
    [InlineData(1)]
    [InlineData(63)]
    [InlineData(64)]
    [InlineData(65)]
    [InlineData(200)]
    public void Comparison_with_long_text_is_exact_across_characters_of_every_width(int repeats)
    {
        // 1, 2, 3 and 4 UTF-8 bytes per character, so the encoded text's pieces end at every offset.
        string text = string.Concat(Enumerable.Repeat("a\u00e9\u65e5\U0001F600", repeats));
        using var store = new Utf8StringStore();
        StoredUtf8String value = store.Add(text);
        Assert.True(value.Equals(text));
        Assert.True(value.StartsWith(text));
        Assert.True(value.StartsWith(text[..^2]));
        Assert.False(value.Equals(text[..^2]));
        Assert.False(value.Equals(text + "a"));
        Assert.False(value.StartsWith(text + "a"));
        Assert.False(value.Equals(text[..^1] + "\ud83d"));
        Assert.False(value.StartsWith(text[..^2] + "\ude00"));
        Assert.False(value.Equals(text[..^2] + "\U0001F601"));
        Assert.False(value.Equals("b" + text[1..]));
    }

    [Fact]
    public void Disposing_a_copy_of_a_closed_read_scope_never_closes_another_threads_scope()
    {
        using var store = new Utf8StringStore();
        StoredUtf8String value = store.Add("kept");
        StringStoreReadScope other = store.EnterRead();
        StringStoreReadScope mine = store.EnterRead();
        StringStoreReadScope copy = mine;
        mine.Dispose();
        InvalidOperationException again = Assert.Throws<InvalidOperationException>(copy.Dispose);
        Assert.StartsWith("This StringStoreReadScope (or a copy of it) was already disposed", again.Message, StringComparison.Ordinal);
        Assert.DoesNotContain("freed", again.Message, StringComparison.Ordinal);
        Assert.Throws<InvalidOperationException>(copy.Dispose);
        InvalidOperationException reset = Assert.Throws<InvalidOperationException>(store.Reset);
        Assert.Contains("1 read scope", reset.Message, StringComparison.Ordinal);
        Assert.Equal("kept", value.ToString());
        other.Dispose();
        store.Reset();
        Assert.False(value.IsValid);
    }

    [Fact]
    public void A_read_scope_blocks_reset_and_dispose_until_it_closes()
    {
        var store = new Utf8StringStore();
        StoredUtf8String value = store.Add("kept");
        StringStoreReadScope scope = store.EnterRead();
        StringStoreReadScope second = store.EnterRead();
        InvalidOperationException reset = Assert.Throws<InvalidOperationException>(store.Reset);
        Assert.Contains("2 read scope", reset.Message, StringComparison.Ordinal);
        Assert.Throws<InvalidOperationException>(store.Dispose);
        Assert.Equal("kept", value.ToString());
        scope.Dispose();
        second.Dispose();
        Assert.Throws<InvalidOperationException>(second.Dispose);
        default(StringStoreReadScope).Dispose();
        store.Dispose();
        Assert.False(value.IsValid);
    }

    [Fact]
    public void A_second_writer_thread_is_refused_while_one_writes()
    {
        using var store = new Utf8StringStore();
        StoredUtf8String value = store.Add("a");
        store.EnterWrite();
        try
        {
            InvalidOperationException add = Assert.IsType<InvalidOperationException>(OnOtherThread(() => store.Add("x")));
            Assert.Contains("one writer", add.Message, StringComparison.Ordinal);
            _ = Assert.IsType<InvalidOperationException>(OnOtherThread(() => store.Replace(value, "y")));
            _ = Assert.IsType<InvalidOperationException>(OnOtherThread(store.Reset));
        }
        finally
        {
            store.ExitWrite();
        }

        Assert.Equal("b", store.Add("b").ToString());
        Assert.Equal(2, store.Count);
    }

    [Fact]
    public void Readers_on_other_threads_read_while_the_writer_appends()
    {
        using var store = new Utf8StringStore(Utf8StringStore.MinBlockSize, AllocationOptions.Default);
        var published = new StoredUtf8String[20_000];
        int count = 0;
        long[] started = new long[2];
        long[] checkedDuringWrites = new long[2];
        int writing = 0;
        Workers.RunAlongside(2, (reader, stop) =>
        {
            using StringStoreReadScope scope = store.EnterRead();
            long checkedValues = 0;
            while (!stop.IsCancellationRequested || checkedValues == 0)
            {
                Interlocked.Increment(ref started[reader]);
                bool duringWrites = Volatile.Read(ref writing) == 1;
                int seen = Volatile.Read(ref count);
                for (int i = Math.Max(0, seen - 100); i < seen; i++)
                {
                    Assert.True(published[i].Equals($"item {i}"));
                    checkedValues++;
                    if (duringWrites && !stop.IsCancellationRequested)
                    {
                        Interlocked.Increment(ref checkedDuringWrites[reader]);
                    }
                }
            }
        },
        () =>
        {
            // The readers are running before the writer starts, so the two sides meet.
            Assert.True(SpinWait.SpinUntil(() => Interlocked.Read(ref started[0]) > 0 && Interlocked.Read(ref started[1]) > 0, Workers.DefaultTimeout), "the readers did not start");
            Volatile.Write(ref writing, 1);
            for (int i = 0; i < published.Length; i++)
            {
                published[i] = store.Add($"item {i}");
                Volatile.Write(ref count, i + 1);
                if (i == published.Length / 2)
                {
                    // Half-way, until both readers have checked values during the appends: the sides meet however the threads are scheduled.
                    Assert.True(SpinWait.SpinUntil(() => Interlocked.Read(ref checkedDuringWrites[0]) > 0 && Interlocked.Read(ref checkedDuringWrites[1]) > 0, Workers.DefaultTimeout), "the readers never met the writer");
                }
            }
        });

        Assert.Equal(published.Length, store.Count);
        // Both sides ran and met: each reader checked values while the writer still appended.
        Assert.All(checkedDuringWrites, c => Assert.True(c > 0, "a reader checked no value while the writer appended"));
    }

    // Each length shape of the header (one to five length bytes: below 64, 8 Ki, 1 Mi, 128 Mi) at
    // its edges, in shared blocks and in blocks of their own: each reads back whole, and every value
    // made of one string's offset and another's length (what a torn copy holds) is refused.
    [Fact]
    public void Strings_at_every_header_length_edge_read_back_and_mixed_offsets_and_lengths_are_refused()
    {
        int[] lengths = [0, 1, 63, 64, 65, 8191, 8192, 8193, (1 << 20) - 1, 1 << 20, (1 << 20) + 1];
        foreach (int blockSize in new[] { Utf8StringStore.MinBlockSize, 4 << 20 })
        {
            using var store = new Utf8StringStore(blockSize, AllocationOptions.Default);
            var values = new List<(StoredUtf8String Value, string Text)>();
            foreach (int length in lengths)
            {
                string text = new((char)('a' + (length % 26)), length);
                values.Add((store.Add(text), text));
            }

            foreach (var (value, text) in values)
            {
                Assert.Equal(text.Length, value.Length);
                Assert.Equal(text, value.ToString());
            }

            foreach (var (x, _) in values)
            {
                foreach (var (y, _) in values)
                {
                    StoredUtf8String mixed = WithLengthOf(x, y);
                    if (x.Length == y.Length)
                    {
                        Assert.True(mixed.IsSameStorage(x));
                        continue;
                    }

                    InvalidOperationException e = Assert.Throws<InvalidOperationException>(() => mixed.ToString());
                    Assert.Contains("not a value its store handed out", e.Message, StringComparison.Ordinal);
                    _ = Assert.Throws<ArgumentException>(() => store.Replace(mixed, "new"));
                }
            }

            StoredUtf8String replaced = store.Replace(values[5].Value, "new");
            Assert.Equal("new", replaced.ToString());
            Assert.Equal(values[5].Text, values[5].Value.ToString());
            Assert.Equal(values[5].Text.Length, store.AbandonedBytes);
        }
    }

    // The value x with the length field of y (a StoredUtf8String is a handle, an offset, a length).
    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(3)]
    public void The_one_pass_encoder_writes_what_the_framework_writes_and_finds_every_unpaired_surrogate(int seed)
    {
        var random = new Random(seed);
        char[] alphabet = ['a', 'Z', '0', '\u007f', '\u0080', 'é', 'ß', '\u07ff', '\u0800', '日', '\uffff', '\ud83d', '\ude00', '\ud800', '\udfff'];
        byte[] buffer = new byte[3 * 300];
        for (int round = 0; round < 2_000; round++)
        {
            string text = new([.. Enumerable.Range(0, random.Next(300)).Select(_ => alphabet[random.Next(alphabet.Length)])]);
            int written = StoredStringEncoding.EncodeShort(text, buffer);
            int firstBad = FirstUnpairedSurrogate(text);
            if (firstBad < 0)
            {
                Assert.Equal(Encoding.UTF8.GetBytes(text), buffer[..written]);
            }
            else
            {
                Assert.Equal(~firstBad, written);
            }
        }
    }

    // The encoder narrows a leading ASCII run 16 and 8 characters at a time: every length around those
    // blocks, with the first non-ASCII character (or an unpaired surrogate) at every position in them.
    [Theory]
    [InlineData('é')]
    [InlineData('日')]
    [InlineData('\u0080')]
    [InlineData('\u007f')]
    [InlineData('\uffff')]
    [InlineData('\ud800')]
    [InlineData('\udc00')]
    public void The_encoder_writes_ASCII_runs_of_every_length_then_the_first_other_character_as_the_framework_does(char other)
    {
        byte[] buffer = new byte[3 * 80];
        for (int length = 0; length <= 60; length++)
        {
            for (int at = -1; at < length; at++)
            {
                char[] chars = [.. Enumerable.Range(0, length).Select(i => (char)('!' + (i % 90)))];
                if (at >= 0)
                {
                    chars[at] = other;
                }

                string text = new(chars);
                buffer.AsSpan().Fill(0xEE);
                int written = StoredStringEncoding.EncodeShort(text, buffer);
                int firstBad = FirstUnpairedSurrogate(text);
                if (firstBad < 0)
                {
                    Assert.Equal(Encoding.UTF8.GetBytes(text), buffer[..written]);
                }
                else
                {
                    Assert.Equal(at, firstBad);
                    Assert.Equal(~firstBad, written);
                }
            }
        }
    }

    [Fact]
    public void Short_and_long_text_with_unpaired_surrogates_is_refused_with_its_index_and_stores_nothing()
    {
        using var store = new Utf8StringStore();
        foreach (string text in new[] { "ab\ud800cd", "ab\udc00", "end\ud800", new string('x', 300) + "\ud800" })
        {
            ArgumentException e = Assert.Throws<ArgumentException>(() => store.Add(text));
            Assert.Contains($"index {FirstUnpairedSurrogate(text)}", e.Message, StringComparison.Ordinal);
            Assert.Throws<ArgumentException>(() => store.Add(text.AsSpan()));
        }

        Assert.Equal(0, store.Count);
        Assert.Equal("😀", store.Add("😀").ToString());
    }

    [Fact]
    public void AddRange_stores_each_string_as_Add_does_and_leases_nothing_after()
    {
        using var store = new Utf8StringStore(Utf8StringStore.MinBlockSize, AllocationOptions.Default);
        var random = new Random(7);
        // Short and long text (past the one-pass limit and past a block), enough to fill several blocks.
        string[] texts = [.. Enumerable.Range(0, 500).Select(i => i % 97 == 0 ? new string('é', 1_000 + i) : "Nø" + new string('a', random.Next(40)) + i)];
        var values = new StoredUtf8String[texts.Length + 3];
        store.AddRange(texts, values);
        for (int i = 0; i < texts.Length; i++)
        {
            Assert.Equal(texts[i], values[i].ToString());
            Assert.True(store.Owns(values[i]));
        }

        Assert.Equal(texts.Length, store.Count);
        Assert.Equal(texts.Sum(t => (long)Encoding.UTF8.GetByteCount(t)), store.UsedBytes);
        Assert.True(store.BlockCount > 3);
        // No lease is left open on a block: the store can be reset.
        store.Reset();
        Assert.Equal(0, store.Count);
    }

    [Fact]
    public void AddRange_stops_at_a_string_it_cannot_store_keeping_those_before()
    {
        using var store = new Utf8StringStore();
        var values = new StoredUtf8String[4];
        ArgumentNullException missing = Assert.Throws<ArgumentNullException>(() => store.AddRange(["a", "b", null!, "d"], values));
        Assert.Equal("values", missing.ParamName);
        Assert.Equal(2, store.Count);
        Assert.Equal("b", values[1].ToString());
        Assert.True(values[2].IsDefault);

        ArgumentException surrogate = Assert.Throws<ArgumentException>(() => store.AddRange(["c", "x\ud800"], values));
        Assert.Contains("index 1", surrogate.Message, StringComparison.Ordinal);
        Assert.Equal(3, store.Count);
        Assert.Throws<ArgumentException>(() => store.AddRange(["a", "b"], new StoredUtf8String[1]));
        store.AddRange([], []);
        store.Reset();
    }

    [Fact]
    public void AddRange_is_refused_while_another_thread_writes_and_after_dispose()
    {
        var store = new Utf8StringStore();
        store.EnterWrite();
        try
        {
            Assert.IsType<InvalidOperationException>(OnOtherThread(() => store.AddRange(["a"], new StoredUtf8String[1])));
        }
        finally
        {
            store.ExitWrite();
        }

        store.Dispose();
        Assert.Throws<ObjectDisposedException>(() => store.AddRange(["a"], new StoredUtf8String[1]));
    }

    private static int FirstUnpairedSurrogate(string text)
    {
        for (int i = 0; i < text.Length; i++)
        {
            if (char.IsHighSurrogate(text[i]) && i + 1 < text.Length && char.IsLowSurrogate(text[i + 1]))
            {
                i++;
            }
            else if (char.IsSurrogate(text[i]))
            {
                return i;
            }
        }

        return -1;
    }

    private static StoredUtf8String WithLengthOf(StoredUtf8String x, StoredUtf8String y)
    {
        StoredUtf8String result = x;
        System.Runtime.CompilerServices.Unsafe.Add(ref System.Runtime.CompilerServices.Unsafe.As<StoredUtf8String, int>(ref result), 3) =
            System.Runtime.CompilerServices.Unsafe.Add(ref System.Runtime.CompilerServices.Unsafe.As<StoredUtf8String, int>(ref y), 3);
        return result;
    }

    private static Exception? OnOtherThread(Action action) => Workers.CatchOnOtherThread(action);
}
