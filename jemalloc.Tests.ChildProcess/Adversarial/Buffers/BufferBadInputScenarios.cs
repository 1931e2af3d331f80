using System.Diagnostics;
using System.Runtime.InteropServices;
using static jemalloc.Tests.ChildProcess.Adversarial.ScenarioHelpers;

namespace jemalloc.Tests.ChildProcess.Adversarial;

/// <summary>
/// Failure class: bad input to the array-like structures. Absurd sizes (0, negative, sizeof(T)*n
/// overflow, beyond any address space), bad indexes and ranges on every member and on leases, bad
/// strings: each throws a conventional .NET exception, leaves the structure unchanged and leaks nothing.
/// Too big is an exception: a structure larger than the memory the process can get (physical memory
/// plus swap) throws OutOfMemoryException at once, instead of being zero-filled until the kernel kills
/// the process (a watchdog, see <see cref="Scenarios"/>, stops the child if it starts to fill).
/// Lengths that overflow an int: a <see cref="FixedUtf8String"/> compared with a .NET string of more
/// than int.MaxValue / 3 characters, and made from text of int.MaxValue UTF-8 bytes.
/// </summary>
internal static class BufferBadInputScenarios
{
    internal const string BadSizes = "bad-sizes";
    internal const string BadIndexes = "bad-indexes";
    internal const string BadRanges = "bad-ranges";
    internal const string BadStrings = "bad-strings";
    internal const string TooBigSafeArray = "too-big-safearray";
    internal const string TooBigHugeArray = "too-big-hugearray";
    internal const string TooBigHugeArrayJustOver = "too-big-hugearray-just-over";
    internal const string TooBigWithValue = "too-big-with-value";
    internal const string BuffersFixedUtf8HugeStringMatch = "buffers-fixedutf8-huge-string-match";
    internal const string BuffersFixedUtf8HugeStringMismatch = "buffers-fixedutf8-huge-string-mismatch";
    internal const string BuffersFixedUtf8IntMaxBytes = "buffers-fixedutf8-int-max-bytes";

    internal static void Register(Dictionary<string, Action> all)
    {
        all[BadSizes] = Sizes;
        all[BadIndexes] = Indexes;
        all[BadRanges] = Ranges;
        all[BadStrings] = Strings;
        all[TooBigSafeArray] = () =>
        {
            long available = PhysicalPlusSwap();
            // SafeArray<long> reaches 16 GiB at most; where that is not beyond memory, a 64-byte struct is.
            if ((long)int.MaxValue * sizeof(long) > available)
            {
                TooBig($"SafeArray<long>({int.MaxValue:N0})", () => new SafeArray<long>(int.MaxValue));
            }
            else
            {
                TooBig($"SafeArray<Line64>({int.MaxValue:N0}) = {(long)int.MaxValue * 64:N0} bytes", () => new SafeArray<Line>(int.MaxValue));
            }
        };
        all[TooBigHugeArray] = () =>
        {
            long elements = PhysicalPlusSwap() / sizeof(long) * 2;
            TooBig($"HugeArray<long>({elements:N0}) = 2x physical memory + swap", () => new HugeArray<long>(elements));
        };
        all[TooBigHugeArrayJustOver] = () =>
        {
            long elements = (PhysicalPlusSwap() + (1L << 30)) / sizeof(long);
            TooBig($"HugeArray<long>({elements:N0}) = physical memory + swap + 1 GiB", () => new HugeArray<long>(elements));
        };
        all[TooBigWithValue] = () =>
        {
            // The create-with-value constructors skip the zero pass: they must refuse as early, never start filling.
            long elements = (PhysicalPlusSwap() + (1L << 30)) / sizeof(long);
            TooBig($"HugeArray<long>({elements:N0}, value) = physical memory + swap + 1 GiB", () => new HugeArray<long>(elements, -1L));
            TooBig($"SafeArray<Line64>({int.MaxValue:N0}, value) = {(long)int.MaxValue * 64:N0} bytes", () => new SafeArray<Line>(int.MaxValue, new Line { First = 1 }));
        };
        all[BuffersFixedUtf8HugeStringMatch] = () => FixedUtf8HugeStringCompare(lastDiffers: false);
        all[BuffersFixedUtf8HugeStringMismatch] = () => FixedUtf8HugeStringCompare(lastDiffers: true);
        all[BuffersFixedUtf8IntMaxBytes] = FixedUtf8IntMaxBytes;
    }

    [StructLayout(LayoutKind.Sequential, Size = 64)]
    internal struct Line : IEquatable<Line>
    {
        public long First;

        public readonly bool Equals(Line other) => First == other.First;

        public override readonly bool Equals(object? obj) => obj is Line other && Equals(other);

        public override readonly int GetHashCode() => First.GetHashCode();
    }

    internal static void NoLeak(string what, long before)
    {
        long after = AllocationLedger.LiveCount;
        Check.Equal(before, after, $"{what}: live allocations after the failed calls (a leak if more)");
    }

    private static void Sizes()
    {
        long live = AllocationLedger.LiveCount;
        Check.Throws<ArgumentOutOfRangeException>("FixedBuffer(0)", () => _ = new FixedBuffer<int>(0));
        Check.Throws<ArgumentOutOfRangeException>("FixedBuffer(-1)", () => _ = new FixedBuffer<int>(-1));
        Check.Throws<ArgumentOutOfRangeException>("FixedBuffer(int.MinValue)", () => _ = new FixedBuffer<int>(int.MinValue));
        Check.Throws<ArgumentOutOfRangeException>("FixedBuffer(empty span)", () => _ = new FixedBuffer<int>(ReadOnlySpan<int>.Empty));
        Check.Throws<ArgumentNullException>("FixedBuffer(null array)", () => _ = new FixedBuffer<int>((int[])null!));
        Check.Throws<NotSupportedException>("FixedBuffer<decimal>", () => _ = new FixedBuffer<decimal>(1));
        Check.Throws<NotSupportedException>("FixedBuffer<Guid>", () => _ = new FixedBuffer<Guid>(1));
        Check.Throws<ArgumentOutOfRangeException>("SafeArray(0)", () => _ = new SafeArray<int>(0));
        Check.Throws<ArgumentOutOfRangeException>("SafeArray(-1)", () => _ = new SafeArray<int>(-1));
        Check.Throws<ArgumentOutOfRangeException>("SafeArray(int.MinValue)", () => _ = new SafeArray<long>(int.MinValue));
        Check.Throws<ArgumentOutOfRangeException>("SafeArray(empty array)", () => _ = new SafeArray<int>(Array.Empty<int>()));
        Check.Throws<ArgumentNullException>("SafeArray(null array)", () => _ = new SafeArray<int>((int[])null!));
        Check.Throws<ArgumentOutOfRangeException>("HugeArray(0)", () => _ = new HugeArray<int>(0));
        Check.Throws<ArgumentOutOfRangeException>("HugeArray(-1)", () => _ = new HugeArray<int>(-1));
        Check.Throws<ArgumentOutOfRangeException>("HugeArray(long.MinValue)", () => _ = new HugeArray<int>(long.MinValue));
        // sizeof(T) * n overflows 64 bits.
        Check.Throws<OverflowException>("HugeArray<long>(long.MaxValue)", () => _ = new HugeArray<long>(long.MaxValue));
        Check.Throws<OverflowException>("HugeArray<long>(long.MaxValue / 4)", () => _ = new HugeArray<long>(long.MaxValue / 4));
        Check.Throws<OverflowException>("HugeArray<Guid>(2^60)", () => _ = new HugeArray<Guid>(1L << 60));
        // Fits in 64 bits but not in any address space: jemalloc refuses at once.
        Check.Throws<OutOfMemoryException>("HugeArray<byte>(long.MaxValue)", () => _ = new HugeArray<byte>(long.MaxValue));
        Check.Throws<OutOfMemoryException>("HugeArray<long>(long.MaxValue / 8)", () => _ = new HugeArray<long>(long.MaxValue / 8));
        using (var arena = new JemArena(budgetBytes: 1 << 20))
        {
            Check.Throws<ArgumentOutOfRangeException>("JemArena.CreateBuffer(0)", () => arena.CreateBuffer<int>(0));
            Check.Throws<ArgumentOutOfRangeException>("JemArena.CreateArray(-1)", () => arena.CreateArray<int>(-1));
            Check.Throws<ArgumentOutOfRangeException>("JemArena.Allocate(0)", () => AllocateRaw(arena, 0));
            Check.Throws<ArenaBudgetExceededException>("over the arena's budget", () => arena.CreateArray<long>(1 << 20));
            Check.Throws<ArenaBudgetExceededException>("HugeArray over the arena's budget", () => arena.CreateHugeArray<byte>(long.MaxValue / 2));
            Check.Equal(0L, arena.UsedBytes, "a refused allocation charges nothing");
            using SafeArray<long> fits = arena.CreateArray<long>(1000);
            Check.True(fits.IsValid, "the arena works after refusals");
        }

        Check.Throws<ArgumentOutOfRangeException>("JemArena(budget 0)", () => _ = new JemArena(budgetBytes: 0));
        Check.Throws<ArgumentOutOfRangeException>("JemArena(budget -5)", () => _ = new JemArena(budgetBytes: -5));
        Check.Throws<ArgumentOutOfRangeException>("MallocxFlags.ThreadCache(uint.MaxValue)", () => MallocxFlags.ThreadCache(uint.MaxValue));
        Check.Throws<ArgumentOutOfRangeException>("MallocxFlags.Arena(uint.MaxValue)", () => MallocxFlags.Arena(uint.MaxValue));
        Check.Throws<ArgumentException>("MallocxFlags.Align(3)", () => MallocxFlags.Align(3));
        Check.Throws<ArgumentOutOfRangeException>("MallocxFlags.LgAlign(-1)", () => MallocxFlags.LgAlign(-1));
        Check.Throws<ArgumentOutOfRangeException>("MallocxFlags.LgAlign(64)", () => MallocxFlags.LgAlign(64));
        NoLeak("bad sizes", live);
    }

    private static unsafe void AllocateRaw(JemArena arena, nuint size) => _ = arena.Allocate(size);

    private static void Indexes()
    {
        long live = AllocationLedger.LiveCount;
        var buffer = new FixedBuffer<int>(10);
        buffer.Fill(5);
        using var array = new SafeArray<int>(10);
        array.Fill(5);
        using var huge = new HugeArray<int>(10);
        huge.Fill(5);
        foreach (int index in new[] { -1, 10, 11, int.MinValue, int.MaxValue, -10 })
        {
            Check.ThrowsExactly<IndexOutOfRangeException>($"FixedBuffer[{index}] get", () => _ = buffer[index]);
            Check.ThrowsExactly<IndexOutOfRangeException>($"FixedBuffer[{index}] set", () => buffer[index] = 9);
            Check.ThrowsExactly<IndexOutOfRangeException>($"SafeArray[{index}] get", () => _ = array[index]);
            Check.ThrowsExactly<IndexOutOfRangeException>($"SafeArray[{index}] set", () => array[index] = 9);
        }

        foreach (long index in new[] { -1L, 10L, long.MinValue, long.MaxValue, 1L << 32, (1L << 32) + 1, -(1L << 32) })
        {
            Check.ThrowsExactly<IndexOutOfRangeException>($"HugeArray[{index}] get", () => _ = huge[index]);
            Check.ThrowsExactly<IndexOutOfRangeException>($"HugeArray[{index}] set", () => huge[index] = 9);
            Check.ThrowsExactly<IndexOutOfRangeException>($"FixedBuffer lease[{index}]", () => { using MemoryLease<int> l = buffer.Lease(); _ = l[index]; });
            Check.ThrowsExactly<IndexOutOfRangeException>($"SafeArray lease[{index}]", () => { using MemoryLease<int> l = array.Lease(); l[index] = 9; });
            Check.ThrowsExactly<IndexOutOfRangeException>($"HugeArray lease[{index}]", () => { using MemoryLease<int> l = huge.Lease(); l[index] = 9; });
        }

        Check.Equal(50, buffer.VectorSum(), "FixedBuffer unchanged by bad writes");
        Check.Equal(50, array.VectorSum(), "SafeArray unchanged by bad writes");
        Check.Equal(50, huge.VectorSum(), "HugeArray unchanged by bad writes");
        Check.Equal(0, buffer.Handle.LeaseCount, "failed lease accesses closed their leases");
        Check.Equal(0, array.Handle.LeaseCount, "failed lease accesses closed their leases (array)");
        buffer.Free();
        array.Dispose();
        huge.Dispose();
        NoLeak("bad indexes", live);
    }

    private static void Ranges()
    {
        long live = AllocationLedger.LiveCount;
        var buffer = new FixedBuffer<int>(10);
        using var array = new SafeArray<int>(10);
        using var huge = new HugeArray<int>(10);
        var eleven = new int[11];
        var two = new int[2];
        Check.Throws<ArgumentException>("FixedBuffer.CopyTo(short)", () => buffer.CopyTo(new int[9]));
        Check.Throws<ArgumentException>("SafeArray.CopyTo(short)", () => array.CopyTo(new int[9]));
        Check.Throws<ArgumentOutOfRangeException>("FixedBuffer.CopyFrom(11)", () => buffer.CopyFrom(eleven));
        Check.Throws<ArgumentOutOfRangeException>("SafeArray.CopyFrom(11)", () => array.CopyFrom(eleven));
        foreach (int start in new[] { -1, 9, 10, int.MaxValue, int.MinValue })
        {
            Check.Throws<ArgumentOutOfRangeException>($"FixedBuffer.CopyFrom(2, {start})", () => buffer.CopyFrom(two, start));
            Check.Throws<ArgumentOutOfRangeException>($"SafeArray.CopyFrom(2, {start})", () => array.CopyFrom(two, start));
        }

        foreach (long start in new[] { -1L, 9L, 10L, long.MaxValue, long.MinValue, long.MaxValue - 1 })
        {
            Check.Throws<ArgumentOutOfRangeException>($"HugeArray.CopyFrom(2, {start})", () => huge.CopyFrom(two, start));
            Check.Throws<ArgumentOutOfRangeException>($"HugeArray.CopyTo(2, {start})", () => huge.CopyTo(two, start));
            Check.Throws<ArgumentOutOfRangeException>($"lease.AsSpan({start}, 2)", () => { using MemoryLease<int> l = huge.Lease(); _ = l.AsSpan(start, 2); });
        }

        Check.Throws<ArgumentOutOfRangeException>("HugeArray.CopyFrom(11, 0)", () => huge.CopyFrom(eleven, 0));
        Check.Throws<ArgumentOutOfRangeException>("HugeArray.CopyTo(11, 0)", () => huge.CopyTo(eleven, 0));
        Check.Throws<ArgumentOutOfRangeException>("lease.AsSpan(0, -1)", () => { using MemoryLease<int> l = buffer.Lease(); _ = l.AsSpan(0, -1); });
        Check.Throws<ArgumentOutOfRangeException>("lease.AsSpan(1, int.MaxValue)", () => { using MemoryLease<int> l = array.Lease(); _ = l.AsSpan(1, int.MaxValue); });
        Check.Throws<ArgumentOutOfRangeException>("lease.AsSpan(10, 1)", () => { using MemoryLease<int> l = array.Lease(); _ = l.AsSpan(10, 1); });
        Check.Throws<ArgumentOutOfRangeException>("lease.GetChunks(0)", () => { using MemoryLease<int> l = array.Lease(); _ = l.GetChunks(0); });
        Check.Throws<ArgumentOutOfRangeException>("lease.GetChunks(-1)", () => { using MemoryLease<int> l = array.Lease(); _ = l.GetChunks(-1); });
        Check.Throws<ArgumentNullException>("SafeArray.EqualsArray(null)", () => array.EqualsArray(null!));
        Check.Throws<ArgumentNullException>("VectorSum(null NativeBuffer)", () => ((SafeArray<int>)null!).VectorSum());
        Check.True(!buffer.SequenceEqual(new int[9]) && !array.SequenceEqual(new int[11]), "SequenceEqual of other lengths is false");
        Check.Equal(0, buffer.VectorSum() + array.VectorSum() + huge.VectorSum(), "nothing written by refused copies");
        Check.Equal(0, array.Handle.LeaseCount + buffer.Handle.LeaseCount + huge.Handle.LeaseCount, "refused operations closed their leases");
        Check.NoThrow("Free after bad ranges", buffer.Free);
        array.Dispose();
        huge.Dispose();
        NoLeak("bad ranges", live);
    }

    private static void Strings()
    {
        long live = AllocationLedger.LiveCount;
        Check.Throws<ArgumentNullException>("FixedUtf8String(null string)", () => _ = new FixedUtf8String((string)null!));
        Check.Throws<ArgumentNullException>("FixedUtf8String(null bytes)", () => _ = new FixedUtf8String((byte[])null!));
        foreach (string bad in new[] { "\uD800", "a\uDC00b", "end\uD83D", "\uDE00\uD83D" })
        {
            Check.Throws<ArgumentException>($"FixedUtf8String(unpaired surrogate {Escape(bad)})", () => _ = new FixedUtf8String(bad));
        }

        foreach (byte[] bad in new[]
        {
            new byte[] { 0xFF }, new byte[] { 0xC0, 0x80 }, new byte[] { 0xE2, 0x82 }, new byte[] { 0xED, 0xA0, 0x80 },
            new byte[] { 0xF4, 0x90, 0x80, 0x80 }, new byte[] { 0x80 }, new byte[] { 0x61, 0xF8, 0x88, 0x80, 0x80, 0x80 },
        })
        {
            Check.Throws<ArgumentException>($"FixedUtf8String(invalid UTF-8 {Convert.ToHexString(bad)})", () => _ = new FixedUtf8String(bad));
        }

        var empty = new FixedUtf8String(string.Empty);
        Check.Equal(0, empty.Length, "empty string length");
        Check.Equal(string.Empty, empty.ToString(), "empty string text");
        Check.Throws<ArgumentOutOfRangeException>("empty.Substring(1)", () => empty.Substring(1));
        empty.Free();

        var withNul = new FixedUtf8String("a\0b");
        Check.Equal(3, withNul.Length, "embedded NUL kept");
        Check.Equal("a\0b", withNul.ToString(), "embedded NUL round trip");
        withNul.Free();

        var text = new FixedUtf8String("héllo");
        Check.Equal(6, text.Length, "UTF-8 length");
        foreach ((int start, int length) in new[] { (-1, 1), (0, -1), (7, 0), (0, 7), (int.MaxValue, int.MaxValue), (int.MinValue, 1), (6, 1), (1, int.MaxValue) })
        {
            Check.Throws<ArgumentOutOfRangeException>($"Substring({start}, {length})", () => text.Substring(start, length));
        }

        Check.Throws<ArgumentOutOfRangeException>("Substring(-1)", () => text.Substring(-1));
        Check.Throws<ArgumentOutOfRangeException>("Substring(7)", () => text.Substring(7));
        Check.Throws<ArgumentException>("Substring(2) inside é", () => text.Substring(2));
        Check.Throws<ArgumentException>("Substring(0, 2) inside é", () => text.Substring(0, 2));
        Check.Throws<ArgumentNullException>("IndexOf(null)", () => text.IndexOf((string)null!));
        Check.Throws<ArgumentNullException>("StartsWith(null)", () => text.StartsWith((string)null!));
        Check.NoThrow("IndexOf(unpaired surrogate)", () => Check.Equal(-1, text.IndexOf("\uD800"), "IndexOf(unpaired surrogate)"));
        Check.NoThrow("IndexOf('\\uD800')", () => Check.Equal(-1, text.IndexOf('\uD800'), "IndexOf(surrogate char)"));
        Check.True(!text.Equals((string?)null) && !text.Equals("h\uD800llo"), "Equals(null / invalid UTF-16) is false");
        Check.Equal("héllo", text.ToString(), "string unchanged");
        text.Free();

        var big = new FixedUtf8String(new string('€', 1_000_000));
        Check.Equal(3_000_000, big.Length, "a million 3-byte characters");
        Check.True(big.EndsWith("€€") && big.IndexOf("x") == -1, "search in a big string");
        big.Free();
        NoLeak("bad strings", live);
    }

    private static string Escape(string s) => string.Concat(s.Select(c => c < 128 ? c.ToString() : $"\\u{(int)c:X4}"));

    private static void TooBig(string what, Func<IDisposable> create)
    {
        Check.Info($"INFO physical+swap={PhysicalPlusSwap():N0} bytes");
        long live = AllocationLedger.LiveCount;
        var stopwatch = Stopwatch.StartNew();
        try
        {
            using IDisposable made = create();
            Check.Fail(what, $"was allocated ({stopwatch.Elapsed.TotalSeconds:N1} s); more than the machine has must throw OutOfMemoryException");
        }
        catch (OutOfMemoryException e)
        {
            Check.Info($"RESULT {what}: OutOfMemoryException after {stopwatch.Elapsed.TotalSeconds:N2} s: {e.Message}");
            Check.Pass();
        }
        catch (Exception e)
        {
            Check.Fail(what, $"threw {e.GetType().Name} (expected OutOfMemoryException): {e.Message}");
        }

        Check.Equal(live, AllocationLedger.LiveCount, "nothing left in the ledger by the refused allocation");
        using var small = new SafeArray<long>(1000);
        small.Fill(1);
        Check.Equal(1000L, small.VectorSum(), "the process still allocates after the refusal");
    }

    // 3 * 715,827,883 overflows an int: each method must still find the text the string holds, and
    // not find it once the string's last byte differs (one scenario each: both take a while). The
    // string is made from bytes outside both heaps, given back before the text is made, so that the
    // process never holds two texts of 1.4 GB.
    private static unsafe void FixedUtf8HugeStringCompare(bool lastDiffers)
    {
        const int length = (int.MaxValue / 3) + 1;
        byte* source = (byte*)NativeMemory.Alloc(length);
        FixedUtf8String utf8;
        try
        {
            var bytes = new Span<byte>(source, length);
            bytes.Fill((byte)'a');
            if (lastDiffers)
            {
                bytes[^1] = (byte)'b';
            }

            utf8 = new FixedUtf8String(bytes);
        }
        finally
        {
            NativeMemory.Free(source);
        }

        try
        {
            Check.Equal(length, utf8.Length, "the huge string's UTF-8 length");
            string text = new('a', length);
            string what = lastDiffers ? "a string of int.MaxValue / 3 + 1 characters that differs in the last one" : "a string of int.MaxValue / 3 + 1 characters";
            Check.Equal(!lastDiffers, utf8.Equals(text), $"Equals(string) of {what}");
            Check.Equal(!lastDiffers, utf8 == text, $"== of {what}");
            Check.Equal(lastDiffers ? -1 : 0, utf8.IndexOf(text), $"IndexOf(string) of {what}");
            Check.Equal(lastDiffers ? -1 : 0, utf8.LastIndexOf(text), $"LastIndexOf(string) of {what}");
            Check.Equal(!lastDiffers, utf8.StartsWith(text), $"StartsWith(string) of {what}");
            Check.Equal(!lastDiffers, utf8.EndsWith(text), $"EndsWith(string) of {what}");
        }
        finally
        {
            utf8.Free();
        }
    }

    // Text whose UTF-8 is int.MaxValue bytes leaves no room for the terminating zero: refused with
    // an ArgumentOutOfRangeException naming the caller's argument, not an overflowed length.
    private static unsafe void FixedUtf8IntMaxBytes()
    {
        // int.MaxValue bytes of zeros (valid UTF-8), never touched: the length is refused before
        // anything is read. Before the string below, whose managed memory stays resident.
        using (var bytes = new HugeArray<byte>(int.MaxValue, AllocationOptions.Default))
        using (MemoryLease<byte> lease = bytes.Lease())
        {
            ArgumentOutOfRangeException? fromBytes = null;
            try
            {
                _ = new FixedUtf8String(lease.AsSpan(0, int.MaxValue));
            }
            catch (ArgumentOutOfRangeException e)
            {
                fromBytes = e;
            }

            Check.True(fromBytes?.ParamName == "utf8", "new FixedUtf8String(ReadOnlySpan<byte>) of int.MaxValue bytes names 'utf8'", fromBytes?.ToString() ?? "returned normally");
        }

        // 715,827,882 three-byte characters and one ASCII letter: int.MaxValue UTF-8 bytes.
        string text = string.Create((int.MaxValue / 3) + 1, 0, (span, _) =>
        {
            span.Fill('\u20AC');
            span[^1] = 'a';
        });
        ArgumentOutOfRangeException? fromString = CatchOutOfRange(() => _ = new FixedUtf8String(text));
        Check.True(fromString?.ParamName == "value", "new FixedUtf8String(string) of int.MaxValue UTF-8 bytes names 'value'", fromString?.ToString() ?? "returned normally");
        text = null!;
        GC.Collect();

        // 715,827,883 three-byte characters: more UTF-8 bytes than an int counts.
        text = new string('\u20AC', (int.MaxValue / 3) + 1);
        fromString = CatchOutOfRange(() => _ = new FixedUtf8String(text));
        Check.True(fromString?.ParamName == "value", "new FixedUtf8String(string) of more than int.MaxValue UTF-8 bytes names 'value'", fromString?.ToString() ?? "returned normally");
    }

    private static ArgumentOutOfRangeException? CatchOutOfRange(Action action)
    {
        try
        {
            action();
            return null;
        }
        catch (ArgumentOutOfRangeException e)
        {
            return e;
        }
    }
}
