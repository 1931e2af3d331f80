using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Text;
using System.Text.Unicode;

namespace jemalloc.Tests.ChildProcess.Adversarial;

/// <summary>
/// The record types attacked again (issue 21): stored strings torn by racy copies of the README's
/// <c>Customer</c> (in a HugeArray and in a T[]) and by every mix of two values' words; keys whose
/// Equals or GetHashCode re-enter the index (dispose, add, remove, look up) or throw; a batch lookup
/// of millions of keys against a writer; caller-owned spans changed by another thread while the
/// store or the index reads them.
/// </summary>
internal static class RecordRoundTwoScenarios
{
    private static readonly TimeSpan Budget = TimeSpan.FromSeconds(2);
    private static readonly TimeSpan HangLimit = TimeSpan.FromSeconds(10);

    internal static void Register(Dictionary<string, Action> all)
    {
        all["records2-torn-string-words"] = TornStringWords;
        all["records2-torn-customer-hugearray"] = () => TornCustomers(useHugeArray: true);
        all["records2-torn-customer-array"] = () => TornCustomers(useHugeArray: false);
        all["records2-torn-read-scope"] = TornReadScope;
        all["records2-add-utf8-changed-meanwhile"] = AddUtf8ChangedMeanwhile;
        all["records2-add-chars-changed-meanwhile"] = () => AddCharsChangedMeanwhile(8 << 10);
        all["records2-add-short-chars-changed-meanwhile"] = () => AddCharsChangedMeanwhile(200);
        all["records2-batch-keys-changed-meanwhile"] = BatchKeysChangedMeanwhile;
        all["records2-batch-lookup-vs-writer"] = BatchLookupVsWriter;
        all["records2-throwing-callbacks"] = ThrowingCallbacks;
        all["records2-refused-writer-then-lookup"] = RefusedWriterThenLookup;
        foreach (Callback callback in new[] { Callback.Equals, Callback.GetHashCode })
        {
            foreach (Inner inner in new[] { Inner.Dispose, Inner.Add, Inner.Remove, Inner.Lookup })
            {
                string name = $"records2-reentrant-{inner.ToString().ToLowerInvariant()}-in-{(callback == Callback.Equals ? "equals" : "hash")}";
                all[name] = () => Reentrant(callback, inner);
            }
        }
    }

    // ---------------------------------------------------------------- class 2: torn values

    // Every mix of the words of two real values (the handle is one aligned 8-byte word, so it moves
    // whole; offset and length are 4 bytes each and may come from either value), as a racy copy
    // can make them: each reads as one of the two values or throws InvalidOperationException, and
    // Replace of a mix either replaces a real value or throws ArgumentException, writing nothing
    // into any block (every real value still reads its own text afterwards).
    private static void TornStringWords()
    {
        using var small = new Utf8StringStore(Utf8StringStore.MinBlockSize, AllocationOptions.Default);
        using var large = new Utf8StringStore(1 << 20, AllocationOptions.Default);
        var values = new List<(StoredUtf8String Value, string Text, Utf8StringStore? Store)>
        {
            (default, "", null),
        };
        var all = new List<(StoredUtf8String Value, string Text)>();
        for (int i = 0; i < 60; i++)
        {
            string text = $"small {i} {new string((char)('a' + (i % 26)), i % 23)}";
            values.Add((small.Add(text), text, small));
        }

        for (int i = 0; i < 3000; i++)
        {
            string text = $"large {i} {new string('é', i % 40)}";
            StoredUtf8String value = large.Add(text);
            all.Add((value, text));
            if (i % 50 == 0)
            {
                values.Add((value, text, large));
            }
        }

        string own = new('Z', 5000);
        values.Add((small.Add(own), own, small));
        Check.Equal(16, Unsafe.SizeOf<StoredUtf8String>(), "a StoredUtf8String is 16 bytes (a handle, an offset and a length)");

        all.AddRange(values.Select(v => (v.Value, v.Text)));
        long whole = 0, another = 0, refused = 0, replaced = 0, replaceRefused = 0;
        foreach (var x in values)
        {
            foreach (var y in values)
            {
                for (int mask = 1; mask < 7; mask++)
                {
                    StoredUtf8String mixed = Mix(x.Value, y.Value, mask);
                    string what = $"a mix (mask {mask}) of '{Short(x.Text)}' and '{Short(y.Text)}'";
                    try
                    {
                        string text = mixed.ToString();
                        int length = mixed.Length;
                        if ((text == x.Text && length == Encoding.UTF8.GetByteCount(x.Text)) || (text == y.Text && length == Encoding.UTF8.GetByteCount(y.Text)))
                        {
                            whole++;
                        }
                        else if (all.Any(v => v.Value.IsSameStorage(mixed) && v.Text == text))
                        {
                            // The mix is bit for bit a third value the store handed out.
                            another++;
                        }
                        else
                        {
                            Check.Fail(what, $"read '{Short(text)}' ({length} bytes), which is neither value");
                        }
                    }
                    catch (InvalidOperationException e) when (e is not ObjectDisposedException)
                    {
                        refused++;
                    }
                    catch (Exception e)
                    {
                        Check.Fail(what, $"threw {e.GetType().Name}: {e.Message}");
                    }

                    Utf8StringStore? owner = (mask & 1) != 0 ? y.Store : x.Store;
                    if (owner is not null && mask % 3 == 0)
                    {
                        try
                        {
                            _ = owner.Replace(mixed, "replacement");
                            replaced++;
                        }
                        catch (ArgumentException)
                        {
                            replaceRefused++;
                        }
                        catch (Exception e)
                        {
                            Check.Fail($"Replace of {what}", $"threw {e.GetType().Name}: {e.Message}");
                        }
                    }
                }
            }
        }

        foreach (var (value, text, _) in values)
        {
            if (value.ToString() != text)
            {
                Check.Fail("a real value after the mixes were read and replaced", $"reads '{Short(value.ToString())}', expected '{Short(text)}'");
            }
        }

        Check.Info($"INFO whole={whole} another={another} refused={refused} replaced={replaced} replaceRefused={replaceRefused}");
        Check.True(whole > 0 && refused > 0 && replaceRefused > 0, "both outcomes seen", $"whole={whole} refused={refused} replaceRefused={replaceRefused}");
    }

    // Bit w of mask: unit w (0 = the 8-byte handle, 1 = the offset, 2 = the length) comes from y.
    private static StoredUtf8String Mix(StoredUtf8String x, StoredUtf8String y, int mask)
    {
        StoredUtf8String result = x;
        Span<byte> to = MemoryMarshal.AsBytes(MemoryMarshal.CreateSpan(ref result, 1));
        ReadOnlySpan<byte> from = MemoryMarshal.AsBytes(MemoryMarshal.CreateReadOnlySpan(ref y, 1));
        (int Start, int Length)[] units = [(0, 8), (8, 4), (12, 4)];
        for (int w = 0; w < units.Length; w++)
        {
            if ((mask & (1 << w)) != 0)
            {
                from.Slice(units[w].Start, units[w].Length).CopyTo(to.Slice(units[w].Start, units[w].Length));
            }
        }

        return result;
    }

    private static string Short(string text) => text.Length <= 24 ? text : $"{text[..24]}... ({text.Length} chars)";

    /// <summary>The README's record: a long, a stored string and an int.</summary>
    internal struct Customer : IEquatable<Customer>
    {
        public long Id;
        public StoredUtf8String Name;
        public int Category;

        public readonly bool Equals(Customer other) => Id == other.Id && Category == other.Category && Name.IsSameStorage(other.Name);

        public override readonly bool Equals(object? obj) => obj is Customer other && Equals(other);

        public override readonly int GetHashCode() => HashCode.Combine(Id, Category);

        public static bool operator ==(Customer left, Customer right) => left.Equals(right);

        public static bool operator !=(Customer left, Customer right) => !left.Equals(right);
    }

    /// <summary>The README's record with one more field: 40 bytes, so some elements of an array straddle a cache line.</summary>
    internal struct WideCustomer : IEquatable<WideCustomer>
    {
        public long Id;
        public StoredUtf8String Name;
        public int Category;
        public double Score;

        public readonly bool Equals(WideCustomer other) => Id == other.Id && Name.IsSameStorage(other.Name);

        public override readonly bool Equals(object? obj) => obj is WideCustomer other && Equals(other);

        public override readonly int GetHashCode() => Id.GetHashCode();

        public static bool operator ==(WideCustomer left, WideCustomer right) => left.Equals(right);

        public static bool operator !=(WideCustomer left, WideCustomer right) => !left.Equals(right);
    }

    // Two threads copy two real customers into the shared elements (of a HugeArray, or of a T[])
    // while two read them and read the names: every name reads as one of the two texts or throws
    // InvalidOperationException (a torn copy), never other memory. Value a sits at the start of a
    // 4 KiB block, value b far into a 1 MiB block, so b's offset on a's block is far past its end.
    // Both the README's Customer and a 40-byte record, whose elements straddle cache lines.
    private static void TornCustomers(bool useHugeArray)
    {
        using var small = new Utf8StringStore(Utf8StringStore.MinBlockSize, AllocationOptions.Default);
        using var large = new Utf8StringStore(1 << 20, AllocationOptions.Default);
        string textA = "Ada Lovelace";
        StoredUtf8String a = small.Add(textA);
        for (int i = 0; i < 4000; i++)
        {
            _ = large.Add($"filler {i:D5} ........");
        }

        string textB = "Grace Hopper, far into its block";
        StoredUtf8String b = large.Add(textB);
        TornRace(useHugeArray, "Customer", textA, textB, new Customer { Id = 1, Name = a, Category = 1 }, new Customer { Id = 2, Name = b, Category = 2 }, c => c.Name);
        TornRace(useHugeArray, "WideCustomer", textA, textB, new WideCustomer { Id = 1, Name = a, Category = 1, Score = 1 }, new WideCustomer { Id = 2, Name = b, Category = 2, Score = 2 }, c => c.Name);
        Check.Equal(textA, a.ToString(), "value a after the races");
        Check.Equal(textB, b.ToString(), "value b after the races");
    }

    private static void TornRace<TRecord>(bool useHugeArray, string type, string textA, string textB, TRecord ca, TRecord cb, Func<TRecord, StoredUtf8String> name)
        where TRecord : unmanaged, IEquatable<TRecord>
    {
        const int elements = 16;
        using var rows = new HugeArray<TRecord>(elements);
        var array = new TRecord[elements];
        for (int e = 0; e < elements; e++)
        {
            rows[e] = ca;
            array[e] = ca;
        }

        long readA = 0, readB = 0, torn = 0;

        void Writer(TRecord first, TRecord second)
        {
            for (int k = 0; k < 64; k++)
            {
                TRecord c = (k & 1) == 0 ? first : second;
                for (int e = 0; e < elements; e++)
                {
                    if (useHugeArray)
                    {
                        rows[e] = c;
                    }
                    else
                    {
                        array[e] = c;
                    }
                }
            }
        }

        void Reader()
        {
            for (int k = 0; k < 64; k++)
            {
                for (int e = 0; e < elements; e++)
                {
                    TRecord c = useHugeArray ? rows[e] : array[e];
                    try
                    {
                        string text = name(c).ToString();
                        if (text == textA)
                        {
                            Interlocked.Increment(ref readA);
                        }
                        else if (text == textB)
                        {
                            Interlocked.Increment(ref readB);
                        }
                        else
                        {
                            Check.Fail($"a racy copy of a {type}'s name", $"read '{Short(text)}' ({text.Length} chars), which is neither value");
                        }
                    }
                    catch (InvalidOperationException e2) when (e2 is not ObjectDisposedException)
                    {
                        Interlocked.Increment(ref torn);
                    }
                }
            }
        }

        string what = $"racy copies of a {type} in a {(useHugeArray ? "HugeArray" : "T[]")}";
        long[] counts = Check.RaceUntil(what, Budget, firstBodyAtLeast: 500, int.MaxValue,
            _ => Writer(ca, cb),
            _ => Writer(cb, ca),
            _ => Reader(),
            _ => Reader());
        Check.Info($"INFO {what}: writes={counts[0] + counts[1]} reads={counts[2] + counts[3]} readA={readA} readB={readB} torn={torn}");
        Check.True(counts[0] > 0 && counts[1] > 0 && counts[2] > 0 && counts[3] > 0, $"{what}: every thread ran");
        Check.True(readA > 0 && readB > 0, $"{what}: the readers saw both values", $"readA={readA} readB={readB}");
    }

    // A read scope is a store and a token: a racy copy can pair one store with another's token.
    // Disposing such a mix throws and closes neither scope (closing one would let a Reset free the
    // blocks under the reader that opened it), and the real scopes still close once each.
    private static void TornReadScope()
    {
        using var a = new Utf8StringStore(Utf8StringStore.MinBlockSize, AllocationOptions.Default);
        using var b = new Utf8StringStore(Utf8StringStore.MinBlockSize, AllocationOptions.Default);
        StoredUtf8String va = a.Add("in a");
        StoredUtf8String vb = b.Add("in b");
        StringStoreReadScope scopeA = a.EnterRead();
        StringStoreReadScope scopeB = b.EnterRead();
        Check.Equal(16, Unsafe.SizeOf<StringStoreReadScope>(), "a read scope is two words");
        StringStoreReadScope mix1 = MixWords(scopeA, scopeB);
        StringStoreReadScope mix2 = MixWords(scopeB, scopeA);
        Check.ThrowsExactly<InvalidOperationException>("Dispose of a scope mixing two stores' words", mix1.Dispose);
        Check.ThrowsExactly<InvalidOperationException>("Dispose of the other mix", mix2.Dispose);
        Check.ThrowsExactly<InvalidOperationException>("Reset of a with its real scope open, after the mixes", a.Reset);
        Check.ThrowsExactly<InvalidOperationException>("Reset of b with its real scope open, after the mixes", b.Reset);
        Check.Equal("in a", va.ToString(), "a's value while its scope is open");
        Check.Equal("in b", vb.ToString(), "b's value while its scope is open");
        Check.NoThrow("Dispose of a's real scope", scopeA.Dispose);
        Check.NoThrow("Dispose of b's real scope", scopeB.Dispose);
        Check.NoThrow("Reset of a once its scope is closed", a.Reset);
        Check.NoThrow("Reset of b once its scope is closed", b.Reset);
    }

    // The first word of x and the second of y.
    private static StringStoreReadScope MixWords(StringStoreReadScope x, StringStoreReadScope y)
    {
        StringStoreReadScope result = x;
        Unsafe.Add(ref Unsafe.As<StringStoreReadScope, long>(ref result), 1) = Unsafe.Add(ref Unsafe.As<StringStoreReadScope, long>(ref y), 1);
        return result;
    }

    // ---------------------------------------------------------------- class 1: caller spans changed meanwhile

    // A thread flips the last byte of the caller's UTF-8 between 'A' and 0xFF while the store adds
    // it: each Add stores valid UTF-8 (what the bytes were at one moment) or throws ArgumentException.
    private static void AddUtf8ChangedMeanwhile()
    {
        using var store = new Utf8StringStore(1 << 20, AllocationOptions.Default);
        byte[] bytes = new byte[16 << 10];
        bytes.AsSpan().Fill((byte)'A');
        long stored = 0, refused = 0, flips = 0, invalid = 0;
        Check.RaceUntil("Add(utf8) while another thread changes the bytes", Budget, firstBodyAtLeast: 2000, int.MaxValue,
            i =>
            {
                try
                {
                    StoredUtf8String value = store.Add(bytes);
                    byte[] copy = value.ToArray();
                    if (!Utf8.IsValid(copy) || copy.Length != bytes.Length || copy.AsSpan(0, copy.Length - 1).ContainsAnyExcept((byte)'A'))
                    {
                        Interlocked.Increment(ref invalid);
                    }

                    Interlocked.Increment(ref stored);
                    if (store.UsedBytes > 256 << 20)
                    {
                        store.Reset();
                    }
                }
                catch (ArgumentException)
                {
                    Interlocked.Increment(ref refused);
                }
            },
            i =>
            {
                for (int k = 0; k < 1000; k++)
                {
                    Volatile.Write(ref bytes[^1], (k & 1) == 0 ? (byte)0xFF : (byte)'A');
                    flips++;
                }
            });
        Check.Info($"INFO stored={stored} refused={refused} flips={flips} invalid={invalid}");
        Check.Equal(0L, invalid, "stored values that are not valid UTF-8 (or not what the bytes were)");
        Check.True(stored > 0 && refused > 0 && flips > 0, "both outcomes seen while the bytes changed", $"stored={stored} refused={refused}");
    }

    // A thread switches the caller's characters between 'a' (one UTF-8 byte) and '€' (three) while
    // the store adds them: each Add stores the UTF-8 of the characters as they were read, all of one
    // kind or a mix, never bytes it did not write, or throws ArgumentException. Long text is counted,
    // encoded and checked; short text (up to 256 characters) is encoded in one pass reading each
    // character once.
    private static void AddCharsChangedMeanwhile(int length)
    {
        using var store = new Utf8StringStore(1 << 20, AllocationOptions.Default);
        char[] chars = new char[length];
        chars.AsSpan().Fill('a');
        long stored = 0, refused = 0, flips = 0, wrong = 0;
        Check.RaceUntil("Add(chars) while another thread changes them", Budget, firstBodyAtLeast: 2000, int.MaxValue,
            i =>
            {
                try
                {
                    StoredUtf8String value = store.Add(chars.AsSpan());
                    byte[] copy = value.ToArray();
                    string text = Utf8.IsValid(copy) ? Encoding.UTF8.GetString(copy) : "\uFFFD";
                    if (text.Length != chars.Length || text.AsSpan().ContainsAnyExcept('a', '€'))
                    {
                        if (Interlocked.Increment(ref wrong) == 1)
                        {
                            Check.Fail("a value stored while its characters changed", $"holds {copy.Length} bytes that are not {chars.Length} characters 'a' or '€'");
                        }
                    }

                    Interlocked.Increment(ref stored);
                    if (store.UsedBytes > 256 << 20)
                    {
                        store.Reset();
                    }
                }
                catch (ArgumentException)
                {
                    Interlocked.Increment(ref refused);
                }
            },
            i =>
            {
                chars.AsSpan().Fill((i & 1) == 0 ? '€' : 'a');
                flips++;
            });
        Check.Info($"INFO stored={stored} refused={refused} flips={flips} wrong={wrong}");
        Check.True(stored > 0 && flips > 0, "Add ran while the characters changed", $"stored={stored} flips={flips}");
    }

    // A thread swaps the caller's keys between two present keys while TryGetValues reads them: each
    // result is the value of one of the two keys, never "not found".
    private static void BatchKeysChangedMeanwhile()
    {
        const int count = 1 << 16;
        using var index = new NativeHashIndex<long>(2 * count, AllocationOptions.Default);
        for (long k = 0; k < 2 * count; k++)
        {
            index.Add(k, 3 * k);
        }

        long[] keys = new long[count];
        for (int i = 0; i < count; i++)
        {
            keys[i] = 2 * i;
        }

        long[] values = new long[count];
        long batches = 0, flips = 0, wrong = 0;
        Check.RaceUntil("TryGetValues while another thread changes the keys", Budget, firstBodyAtLeast: 50, int.MaxValue,
            i =>
            {
                _ = index.TryGetValues(keys, values);
                for (int j = 0; j < count; j++)
                {
                    if (values[j] != 3 * 2 * j && values[j] != 3 * (2 * j + 1))
                    {
                        if (Interlocked.Increment(ref wrong) == 1)
                        {
                            Check.Fail("TryGetValues of keys changed meanwhile", $"key {j} (either {2 * j} or {2 * j + 1}) read {values[j]}");
                        }
                    }
                }

                batches++;
            },
            i =>
            {
                for (int j = 0; j < count; j++)
                {
                    Volatile.Write(ref keys[j], keys[j] ^ 1);
                }

                flips++;
            });
        Check.Info($"INFO batches={batches} flips={flips} wrong={wrong}");
        Check.True(batches > 0 && flips > 0, "both sides ran", $"batches={batches} flips={flips}");
    }

    // ---------------------------------------------------------------- class 6: readers starved

    // One batch of 4M keys, far longer to look up than the writer's interval, while a writer sets a
    // value every 10 ms: the batch finishes with every value right, and the writer wrote meanwhile.
    private static void BatchLookupVsWriter()
    {
        const int count = 4 << 20;
        using var index = new NativeHashIndex<long>(count, AllocationOptions.Default);
        long[] keys = new long[count];
        for (int i = 0; i < count; i++)
        {
            keys[i] = i;
            index.Add(i, 2L * i);
        }

        index.Add(-1, 0);
        long[] values = new long[count];
        long writes = 0;
        bool stop = false;
        Exception? writerError = null;
        var writer = new Thread(() =>
        {
            try
            {
                for (long v = 1; !Volatile.Read(ref stop); v++)
                {
                    _ = index.Set(-1, v);
                    Interlocked.Increment(ref writes);
                    Thread.Sleep(10);
                }
            }
            catch (Exception e)
            {
                writerError = e;
            }
        })
        { IsBackground = true };
        int found = -1;
        Exception? readerError = null;
        long writesBefore = 0, writesAfter = 0;
        var reader = new Thread(() =>
        {
            try
            {
                writesBefore = Interlocked.Read(ref writes);
                found = index.TryGetValues(keys, values);
                writesAfter = Interlocked.Read(ref writes);
            }
            catch (Exception e)
            {
                readerError = e;
            }
        })
        { IsBackground = true };
        writer.Start();
        while (Interlocked.Read(ref writes) == 0)
        {
            Thread.Sleep(1);
        }

        var stopwatch = System.Diagnostics.Stopwatch.StartNew();
        reader.Start();
        bool finished = reader.Join(TimeSpan.FromSeconds(30));
        Volatile.Write(ref stop, true);
        Check.True(writer.Join(HangLimit), "the writer stopped");
        Check.Info($"INFO finished={finished} seconds={stopwatch.Elapsed.TotalSeconds:F1} writesDuringRead={writesAfter - writesBefore}");
        if (!finished)
        {
            Check.Fail("TryGetValues of 4M keys while a writer sets a value every 10 ms", "did not finish in 30 s");
            return;
        }

        Check.True(readerError is null, "the reader threw nothing", $"{readerError}");
        Check.True(writerError is null, "the writer threw nothing", $"{writerError}");
        Check.Equal(count, found, "keys found");
        int wrong = 0;
        for (int i = 0; i < count; i++)
        {
            wrong += values[i] == 2L * i ? 0 : 1;
        }

        Check.Equal(0, wrong, "values read wrong");
        Check.True(writesAfter - writesBefore > 1, "the writer wrote while the batch was read", $"{writesAfter - writesBefore} writes");
    }

    // ---------------------------------------------------------------- class 5: user code inside the index

    internal enum Callback
    {
        Equals,
        GetHashCode,
    }

    internal enum Inner
    {
        Dispose,
        Add,
        Remove,
        Lookup,
    }

    /// <summary>A key whose Equals and GetHashCode run a hook once armed; few hash codes, so probes meet other keys.</summary>
    internal readonly struct HostileKey(long id) : IEquatable<HostileKey>
    {
        private static Action? s_onEquals;
        private static Action? s_onHash;
        private static int s_skip;

        public long Id { get; } = id;

        /// <summary>Runs <paramref name="hook"/> in the (<paramref name="skip"/>+1)th call of <paramref name="callback"/> from now, once.</summary>
        public static void Arm(Callback callback, int skip, Action hook)
        {
            Volatile.Write(ref s_skip, skip);
            if (callback == Callback.Equals)
            {
                Volatile.Write(ref s_onEquals, hook);
            }
            else
            {
                Volatile.Write(ref s_onHash, hook);
            }
        }

        public static void Disarm()
        {
            Volatile.Write(ref s_onEquals, null);
            Volatile.Write(ref s_onHash, null);
        }

        public bool Equals(HostileKey other)
        {
            Fire(ref s_onEquals);
            return Id == other.Id;
        }

        public override bool Equals(object? obj) => obj is HostileKey other && Equals(other);

        public override int GetHashCode()
        {
            Fire(ref s_onHash);
            return (int)(Id % 8);
        }

        public override string ToString() => $"key {Id}";

        private static void Fire(ref Action? hook)
        {
            if (Volatile.Read(ref hook) is null || Interlocked.Decrement(ref s_skip) >= 0)
            {
                return;
            }

            Interlocked.Exchange(ref hook, null)?.Invoke();
        }
    }

    private sealed class UserCodeFailure() : Exception("the key's callback failed");

    private const int Keys = 40;

    private static NativeHashIndex<HostileKey> NewIndex()
    {
        var index = new NativeHashIndex<HostileKey>();
        for (long k = 0; k < Keys; k++)
        {
            index.Add(new HostileKey(k), 2 * k);
        }

        return index;
    }

    // The outer operations a callback runs inside, each with the keys it leaves: a lookup of the
    // last key, a batch lookup, Add and Set of a new key, Remove of a key in the middle of a run.
    private static readonly (string Name, Action<NativeHashIndex<HostileKey>> Run, long Added, long Removed)[] Outer =
    [
        ("TryGetValue", index => index.TryGetValue(new HostileKey(Keys - 1), out _), -1, -1),
        ("TryGetValues", index => index.TryGetValues([new HostileKey(3), new HostileKey(Keys - 1)], new long[2]), -1, -1),
        ("ContainsKey", index => index.ContainsKey(new HostileKey(Keys + 7)), -1, -1),
        ("Add", index => index.Add(new HostileKey(Keys), 2 * Keys), Keys, -1),
        ("Set", index => index.Set(new HostileKey(Keys), 2 * Keys), Keys, -1),
        ("Remove", index => index.Remove(new HostileKey(5)), -1, 5),
    ];

    // Each outer operation on a fresh index, with the callback re-entering it once (the hook is
    // armed to fire inside the operation: for Remove's GetHashCode on its second call, inside the
    // backward shift): the re-entering call throws InvalidOperationException naming the reentrancy,
    // the outer operation finishes (nothing hangs) and leaves exactly the keys it should.
    private static void Reentrant(Callback callback, Inner inner)
    {
        foreach (var (name, run, added, removed) in Outer)
        {
            NativeHashIndex<HostileKey> index = NewIndex();
            Exception? innerError = null;
            bool fired = false;
            int skip = callback == Callback.GetHashCode && name == "Remove" ? 1 : 0;
            HostileKey.Arm(callback, skip, () =>
            {
                fired = true;
                try
                {
                    switch (inner)
                    {
                        case Inner.Dispose:
                            index.Dispose();
                            break;
                        case Inner.Add:
                            index.Add(new HostileKey(1000), 1);
                            break;
                        case Inner.Remove:
                            _ = index.Remove(new HostileKey(1));
                            break;
                        case Inner.Lookup:
                            _ = index.TryGetValue(new HostileKey(2), out _);
                            break;
                    }
                }
                catch (Exception e)
                {
                    innerError = e;
                }
            });
            string what = $"{inner} from inside {callback} during {name}";
            Exception? outerError = RunWithTimeout(what, () => run(index), out bool finished);
            HostileKey.Disarm();
            if (!finished)
            {
                continue;
            }

            Check.True(fired, $"{what}: the callback ran inside the operation");
            Check.True(innerError is InvalidOperationException and not ObjectDisposedException && innerError.Message.Contains("reentr", StringComparison.OrdinalIgnoreCase),
                $"{what} is refused with an InvalidOperationException naming the reentrancy",
                innerError is null ? "it did not throw" : $"it threw {innerError.GetType().Name}: {innerError.Message}");
            Check.True(outerError is null, $"{what}: the outer operation completes", $"{outerError}");
            if (index.IsDisposed)
            {
                Check.Fail(what, "the index was disposed from inside its own operation");
                continue;
            }

            ExpectKeys(what, index, added, removed, failedKey: -1);
            Check.NoThrow($"{what}: Dispose afterwards", index.Dispose);
        }
    }

    // A writer is held inside a key's Equals; a second thread's Add and Remove are refused as a
    // second writer, and that thread's lookups afterwards are not taken for reentrant calls (the
    // refused write left no trace of having entered the index). Then the first write completes.
    private static void RefusedWriterThenLookup()
    {
        NativeHashIndex<HostileKey> index = NewIndex();
        using var inside = new ManualResetEventSlim();
        using var release = new ManualResetEventSlim();
        HostileKey.Arm(Callback.Equals, 0, () =>
        {
            inside.Set();
            _ = release.Wait(HangLimit);
        });
        Exception? writerError = null;
        var writer = new Thread(() =>
        {
            try
            {
                index.Add(new HostileKey(Keys), 2 * Keys);
            }
            catch (Exception e)
            {
                writerError = e;
            }
        })
        { IsBackground = true };
        writer.Start();
        Check.True(inside.Wait(HangLimit), "the writer is inside the key's Equals");
        Check.ThrowsExactly<InvalidOperationException>("Add while another thread writes", () => index.Add(new HostileKey(Keys + 1), 1));
        Check.ThrowsExactly<InvalidOperationException>("Remove while another thread writes", () => index.Remove(new HostileKey(1)));
        Check.NoThrow("a lookup on the refused writer's thread", () => index.TryGetValue(new HostileKey(3), out _));
        Check.NoThrow("a batch lookup on the refused writer's thread", () => index.TryGetValues([new HostileKey(3)], new long[1]));
        release.Set();
        Check.True(writer.Join(HangLimit), "the held writer finished");
        Check.True(writerError is null, "the held writer threw nothing", $"{writerError}");
        ExpectKeys("after the refused writes", index, added: Keys, removed: -1, failedKey: -1);
        Check.NoThrow("Dispose on the refused writer's thread", index.Dispose);
    }

    private static Exception? RunWithTimeout(string what, Action action, out bool finished)
    {
        Exception? error = null;
        var thread = new Thread(() =>
        {
            try
            {
                action();
            }
            catch (Exception e)
            {
                error = e;
            }
        })
        { IsBackground = true, Name = what };
        thread.Start();
        finished = thread.Join(HangLimit);
        if (!finished)
        {
            Check.Fail(what, $"hung (did not finish in {HangLimit.TotalSeconds} s)");
        }

        return error;
    }

    // The index holds exactly keys 0..Keys-1 with value 2k, plus added, minus removed.
    private static void ExpectKeys(string what, NativeHashIndex<HostileKey> index, long added, long removed, long failedKey)
    {
        long expectedCount = Keys + (added >= 0 ? 1 : 0) - (removed >= 0 ? 1 : 0);
        Check.Equal(expectedCount, index.Count, $"{what}: Count");
        for (long k = 0; k < Keys + 1; k++)
        {
            bool expected = k < Keys ? k != removed : k == added;
            bool found = index.TryGetValue(new HostileKey(k), out long value);
            if (found != expected || (found && value != 2 * k))
            {
                Check.Fail($"{what}: key {k}", found ? $"found with value {value}, expected {(expected ? 2 * k : "absent")}" : "not found");
            }
        }

        // Removing and re-adding each key works: no duplicate left behind.
        for (long k = 0; k < Keys; k++)
        {
            if (k != removed && !index.Remove(new HostileKey(k)))
            {
                Check.Fail($"{what}: removing key {k} afterwards", "it was not there");
            }

            if (index.ContainsKey(new HostileKey(k)))
            {
                Check.Fail($"{what}: key {k} after its removal", "still found (a duplicate entry)");
            }
        }

        _ = failedKey;
    }

    // A callback that throws on its (n+1)th call inside each operation, for every n that reaches
    // it: the user's exception comes out, and the index is exactly as before the call (Count, every
    // key found with its value, the key to remove still there, no table left in the ledger).
    private static void ThrowingCallbacks()
    {
        long tried = 0, threw = 0;
        foreach (Callback callback in new[] { Callback.Equals, Callback.GetHashCode })
        {
            foreach (var (name, run, added, removed) in Outer.Append(("Add with growth", GrowingAdd, -1, -1)))
            {
                for (int skip = 0; skip < 48; skip++)
                {
                    NativeHashIndex<HostileKey> index = NewIndex();
                    if (name == "Add with growth")
                    {
                        AddUpToGrowth(index);
                    }

                    long live = AllocationLedger.LiveCount;
                    long countBefore = index.Count;
                    HostileKey.Arm(callback, skip, () => throw new UserCodeFailure());
                    string what = $"{callback} throwing on call {skip + 1} of {name}";
                    Exception? error = RunWithTimeout(what, () => run(index), out bool finished);
                    HostileKey.Disarm();
                    if (!finished)
                    {
                        break;
                    }

                    tried++;
                    if (error is null)
                    {
                        // The operation made fewer calls than that: it completed normally.
                        index.Dispose();
                        break;
                    }

                    threw++;
                    Check.True(error is UserCodeFailure, $"{what}: the user's exception comes out", $"{error.GetType().Name}: {error.Message}");
                    Check.Equal(live, AllocationLedger.LiveCount, $"{what}: ledger entries");
                    if (name == "Add with growth")
                    {
                        Check.Equal(countBefore, index.Count, $"{what}: Count");
                        for (long k = 0; k < countBefore; k++)
                        {
                            if (!index.TryGetValue(new HostileKey(k), out long value) || value != 2 * k)
                            {
                                Check.Fail($"{what}: key {k}", "lost or changed");
                            }
                        }
                    }
                    else
                    {
                        ExpectKeys(what, index, added: -1, removed: -1, failedKey: removed >= 0 ? removed : added);
                    }

                    index.Dispose();
                }
            }
        }

        Check.Info($"INFO tried={tried} threw={threw}");
        Check.True(threw > 20, "callbacks threw inside the operations", $"{threw}");
    }

    private static void AddUpToGrowth(NativeHashIndex<HostileKey> index)
    {
        long k = index.Count;
        while (index.Count + 1 <= index.Capacity / 4 * 3)
        {
            index.Add(new HostileKey(k), 2 * k);
            k++;
        }
    }

    private static void GrowingAdd(NativeHashIndex<HostileKey> index) => index.Add(new HostileKey(index.Count), 2 * index.Count);
}
