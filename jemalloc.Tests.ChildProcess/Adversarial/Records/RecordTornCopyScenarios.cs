using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Text;
using System.Text.Unicode;

namespace jemalloc.Tests.ChildProcess.Adversarial;

/// <summary>
/// Failure class: torn copies in the record types: stored strings torn by racy copies of the README's
/// <c>Customer</c> (in a HugeArray and in a T[]) and by every mix of two values' words, a read scope
/// mixed from two stores; caller-owned spans (UTF-8 bytes, characters, batch keys) changed by another
/// thread while the store or the index reads them.
/// </summary>
internal static class RecordTornCopyScenarios
{
    internal const string RecordsTornStringWords = "records-torn-string-words";
    internal const string RecordsTornCustomerHugeArray = "records-torn-customer-hugearray";
    internal const string RecordsTornCustomerArray = "records-torn-customer-array";
    internal const string RecordsTornReadScope = "records-torn-read-scope";
    internal const string RecordsAddUtf8ChangedMeanwhile = "records-add-utf8-changed-meanwhile";
    internal const string RecordsAddCharsChangedMeanwhile = "records-add-chars-changed-meanwhile";
    internal const string RecordsAddShortCharsChangedMeanwhile = "records-add-short-chars-changed-meanwhile";
    internal const string RecordsBatchKeysChangedMeanwhile = "records-batch-keys-changed-meanwhile";

    internal static void Register(Dictionary<string, Action> all)
    {
        all[RecordsTornStringWords] = TornStringWords;
        all[RecordsTornCustomerHugeArray] = () => TornCustomers(useHugeArray: true);
        all[RecordsTornCustomerArray] = () => TornCustomers(useHugeArray: false);
        all[RecordsTornReadScope] = TornReadScope;
        all[RecordsAddUtf8ChangedMeanwhile] = AddUtf8ChangedMeanwhile;
        all[RecordsAddCharsChangedMeanwhile] = () => AddCharsChangedMeanwhile(8 << 10);
        all[RecordsAddShortCharsChangedMeanwhile] = () => AddCharsChangedMeanwhile(200);
        all[RecordsBatchKeysChangedMeanwhile] = BatchKeysChangedMeanwhile;
    }

    private static readonly TimeSpan Budget = TimeSpan.FromSeconds(2);

    // ---- Torn values

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

    // ---- Caller spans changed meanwhile

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
}
