using System.Runtime.CompilerServices;
using static jemalloc.Tests.ChildProcess.Adversarial.ScenarioHelpers;

namespace jemalloc.Tests.ChildProcess.Adversarial;

/// <summary>
/// Failure class: lifetime misuse, on one thread, of the array-like structures (FixedBuffer,
/// FixedUtf8String, SafeArray, HugeArray and their leases). Stale copies: after Free or Dispose every
/// public member, called through any copy and on any thread, throws <see cref="ObjectDisposedException"/>
/// (or answers "not valid" where the member is a query), also after a slot was reused millions of
/// times. Double free, over-release, free while acquired or leased, lease copies disposed twice,
/// default leases and structures, leases used after Dispose, two parties sharing a structure, count
/// limits: each throws the documented exception and leaves the structure usable. An acquired array whose
/// last reference is dropped keeps its memory (the finalizer must not free what <c>Acquire()</c> holds).
/// Without checked mode, a span kept past its lease must not crash.
/// </summary>
internal static class BufferLifetimeMisuseScenarios
{
    internal const string StaleFixedBuffer = "stale-fixedbuffer";
    internal const string StaleUtf8String = "stale-utf8string";
    internal const string StaleSafeArray = "stale-safearray";
    internal const string StaleHugeArray = "stale-hugearray";
    internal const string GenerationReuse = "generation-reuse";
    internal const string MisuseDoubleFree = "misuse-double-free";
    internal const string MisuseOverRelease = "misuse-over-release";
    internal const string MisuseFreeWhileAcquired = "misuse-free-while-acquired";
    internal const string MisuseFreeWhileLeased = "misuse-free-while-leased";
    internal const string MisuseLeaseCopies = "misuse-lease-copies";
    internal const string MisuseDefaultValues = "misuse-default-values";
    internal const string MisuseTwoParties = "misuse-two-parties";
    internal const string MisuseCountLimits = "misuse-count-limits";
    internal const string MisuseChunksAfterLeaseDispose = "misuse-chunks-after-lease-dispose";
    internal const string BuffersAcquireKeepsMemorySafeArray = "buffers-acquire-keeps-memory-safearray";
    internal const string BuffersAcquireKeepsMemoryHugeArray = "buffers-acquire-keeps-memory-hugearray";
    internal const string UncheckedStaleSpan = "unchecked-stale-span";

    internal static void Register(Dictionary<string, Action> all)
    {
        all[StaleFixedBuffer] = FixedBufferAfterFree;
        all[StaleUtf8String] = Utf8StringAfterFree;
        all[StaleSafeArray] = SafeArrayAfterDispose;
        all[StaleHugeArray] = HugeArrayAfterDispose;
        all[GenerationReuse] = Reuse;
        all[MisuseDoubleFree] = DoubleFree;
        all[MisuseOverRelease] = OverRelease;
        all[MisuseFreeWhileAcquired] = FreeWhileAcquired;
        all[MisuseFreeWhileLeased] = FreeWhileLeased;
        all[MisuseLeaseCopies] = LeaseCopies;
        all[MisuseDefaultValues] = DefaultValues;
        all[MisuseTwoParties] = TwoParties;
        all[MisuseCountLimits] = CountLimits;
        all[MisuseChunksAfterLeaseDispose] = ChunksAfterLeaseDispose;
        all[BuffersAcquireKeepsMemorySafeArray] = () => AcquireKeepsMemory(huge: false);
        all[BuffersAcquireKeepsMemoryHugeArray] = () => AcquireKeepsMemory(huge: true);
        all[UncheckedStaleSpan] = StaleSpanUnchecked;
    }

    private const int Victim = 0x22222222;

    internal struct Holder : IEquatable<Holder>
    {
        public FixedBuffer<int> Buffer;

        public readonly bool Equals(Holder other) => Buffer == other.Buffer;

        public override readonly bool Equals(object? obj) => obj is Holder other && Equals(other);

        public override readonly int GetHashCode() => Buffer.GetHashCode();
    }

    private static void FixedBufferAfterFree()
    {
        var buffer = new FixedBuffer<int>(16);
        buffer.Fill(7);
        FixedBuffer<int> copy = buffer;
        using var holders = new SafeArray<Holder>(1);
        holders[0] = new Holder { Buffer = buffer };
        copy.Free();

        // Through the original, a copy, a copy stored in native memory, and on other threads.
        FixedBufferMembersThrow("original", buffer);
        FixedBufferMembersThrow("copy", copy);
        FixedBufferMembersThrow("stored copy", holders[0].Buffer);
        OnThreads(4, t => FixedBufferMembersThrow($"thread {t}", buffer));

        // A new buffer that reuses the slot or the memory must not revive the stale copy.
        var next = new FixedBuffer<int>(16);
        next.Fill(9);
        FixedBufferMembersThrow("after reuse", buffer);
        Check.True(next.SequenceEqual(Enumerable.Repeat(9, 16).ToArray()), "new buffer untouched by stale copies");
        next.Free();
    }

    internal static void FixedBufferMembersThrow(string tag, FixedBuffer<int> b)
    {
        var array = new int[64];
        Check.True(!b.IsValid, $"{tag}: IsValid false");
        Check.Equal(-1, b.AcquireCount, $"{tag}: AcquireCount");
        Check.True(b.Handle != default && !b.Handle.IsValid, $"{tag}: Handle invalid");
        Check.Equal(-1, b.Handle.LeaseCount, $"{tag}: Handle.LeaseCount");
        Check.NoThrow($"{tag}: ToString", () => Check.True(b.ToString().Contains("freed", StringComparison.Ordinal), $"{tag}: ToString says freed", b.ToString()));
        Check.NoThrow($"{tag}: GetHashCode/Equals", () => _ = b.GetHashCode() + (b.Equals(b) ? 1 : 0));
        foreach ((string name, Action action) in new (string, Action)[]
        {
            ("Length", () => _ = b.Length),
            ("this[0] get", () => _ = b[0]),
            ("this[0] set", () => b[0] = 1),
            ("this[15] get", () => _ = b[15]),
            ("this[-1] get", () => _ = b[-1]),
            ("this[1000] set", () => b[1000] = 1),
            ("Pointer", () => _ = b.Pointer),
            ("Lease", () => { using MemoryLease<int> lease = b.Lease(); }),
            ("Fill", () => b.Fill(1)),
            ("CopyTo", () => b.CopyTo(array)),
            ("CopyFrom", () => b.CopyFrom(new int[1])),
            ("ToArray", () => b.ToArray()),
            ("SequenceEqual", () => b.SequenceEqual(array)),
            ("Acquire", b.Acquire),
            ("Release", b.Release),
            ("Free", b.Free),
            ("ThrowIfInvalid", b.ThrowIfInvalid),
            ("foreach", () => { foreach (int _ in b) { } }),
            ("IEnumerable", () => _ = b.Sum()),
            ("VectorFill", () => b.VectorFill(1)),
            ("VectorAdd", () => b.VectorAdd(1)),
            ("VectorMultiply", () => b.VectorMultiply(2)),
            ("VectorSum", () => b.VectorSum()),
            ("VectorMin", () => b.VectorMin()),
            ("VectorMax", () => b.VectorMax()),
            ("VectorAllLessThan", () => b.VectorAllLessThan(5)),
        })
        {
            Check.ThrowsExactly<ObjectDisposedException>($"{tag}: FixedBuffer.{name}", action);
        }
    }

    private static void Utf8StringAfterFree()
    {
        var text = new FixedUtf8String("héllo wörld");
        FixedUtf8String copy = text;
        var other = new FixedUtf8String("wörld");
        text.Free();
        Utf8MembersThrow("original", text, other);
        Utf8MembersThrow("copy", copy, other);
        OnThreads(3, t => Utf8MembersThrow($"thread {t}", copy, other));
        // The live one is unaffected, and comparing it with a stale one throws from either side.
        Check.Equal("wörld", other.ToString(), "live string intact");
        Check.ThrowsExactly<ObjectDisposedException>("live.Equals(stale)", () => other.Equals(text));
        Check.ThrowsExactly<ObjectDisposedException>("live.CompareTo(stale)", () => other.CompareTo(text));
        Check.ThrowsExactly<ObjectDisposedException>("live.IndexOf(stale)", () => other.IndexOf(text));
        other.Free();
    }

    private static void Utf8MembersThrow(string tag, FixedUtf8String s, FixedUtf8String live)
    {
        Check.True(!s.IsValid, $"{tag}: IsValid false");
        foreach ((string name, Action action) in new (string, Action)[]
        {
            ("Length", () => _ = s.Length),
            ("Pointer", () => _ = s.Pointer),
            ("Lease", () => { using ReadOnlyMemoryLease<byte> lease = s.Lease(); }),
            ("ToArray", () => s.ToArray()),
            ("CopyTo", () => s.CopyTo(new byte[64])),
            ("ToString", () => s.ToString()),
            ("Equals(FixedUtf8String)", () => s.Equals(live)),
            ("Equals(string)", () => s.Equals("x")),
            ("Equals(object)", () => s.Equals((object)live)),
            ("operator ==", () => _ = s == "héllo wörld"),
            ("GetHashCode", () => s.GetHashCode()),
            ("CompareTo", () => s.CompareTo(live)),
            ("operator <", () => _ = s < live),
            ("IndexOf(string)", () => s.IndexOf("l")),
            ("IndexOf(char)", () => s.IndexOf('l')),
            ("IndexOf(FixedUtf8String)", () => s.IndexOf(live)),
            ("LastIndexOf(string)", () => s.LastIndexOf("l")),
            ("LastIndexOf(char)", () => s.LastIndexOf('l')),
            ("LastIndexOf(FixedUtf8String)", () => s.LastIndexOf(live)),
            ("StartsWith(string)", () => s.StartsWith("h")),
            ("StartsWith(FixedUtf8String)", () => s.StartsWith(live)),
            ("EndsWith(string)", () => s.EndsWith("d")),
            ("EndsWith(FixedUtf8String)", () => s.EndsWith(live)),
            ("Substring(1)", () => s.Substring(1)),
            ("Substring(0, 1)", () => s.Substring(0, 1)),
            ("Acquire", s.Acquire),
            ("Release", s.Release),
            ("Free", s.Free),
        })
        {
            Check.ThrowsExactly<ObjectDisposedException>($"{tag}: FixedUtf8String.{name}", action);
        }
    }

    private static void SafeArrayAfterDispose()
    {
        var array = new SafeArray<int>(32);
        array.Fill(3);
        SafeArray<int> alias = array;
        array.Dispose();
        SafeArrayMembersThrow("disposed", alias);
        OnThreads(4, t => SafeArrayMembersThrow($"thread {t}", alias));
        Check.NoThrow("Dispose again", array.Dispose);
        Check.True(array.IsClosed, "IsClosed after Dispose");
    }

    internal static void SafeArrayMembersThrow(string tag, SafeArray<int> a)
    {
        Check.True(!a.IsValid, $"{tag}: IsValid false");
        Check.Equal(-1, a.AcquireCount, $"{tag}: AcquireCount");
        Check.True(!a.Handle.IsValid, $"{tag}: Handle invalid");
        NativeBufferMembersThrow(tag, a);
        foreach ((string name, Action action) in new (string, Action)[]
        {
            ("this[0] get", () => _ = a[0]),
            ("this[0] set", () => a[0] = 1),
            ("this[31] get", () => _ = a[31]),
            ("this[-1] get", () => _ = a[-1]),
            ("this[32] set", () => a[32] = 1),
            ("CopyTo", () => a.CopyTo(new int[64])),
            ("CopyFrom", () => a.CopyFrom(new int[1])),
            ("ToArray", () => a.ToArray()),
            ("EqualsArray", () => a.EqualsArray(new int[32])),
            ("SequenceEqual", () => a.SequenceEqual(new int[32])),
        })
        {
            Check.ThrowsExactly<ObjectDisposedException>($"{tag}: SafeArray.{name}", action);
        }
    }

    internal static void NativeBufferMembersThrow(string tag, NativeBuffer<int> a)
    {
        foreach ((string name, Action action) in new (string, Action)[]
        {
            ("Pointer", () => _ = a.Pointer),
            ("Lease", () => { using MemoryLease<int> lease = a.Lease(); }),
            ("Fill", () => a.Fill(1)),
            ("Acquire", a.Acquire),
            ("Release", a.Release),
            ("ThrowIfInvalid", a.ThrowIfInvalid),
            ("foreach", () => { foreach (int _ in a) { } }),
            ("IEnumerable", () => _ = a.Sum()),
            ("VectorFill", () => a.VectorFill(1)),
            ("VectorAdd", () => a.VectorAdd(1)),
            ("VectorMultiply", () => a.VectorMultiply(2)),
            ("VectorSum", () => a.VectorSum()),
            ("VectorMin", () => a.VectorMin()),
            ("VectorMax", () => a.VectorMax()),
            ("VectorAllLessThan", () => a.VectorAllLessThan(5)),
        })
        {
            Check.ThrowsExactly<ObjectDisposedException>($"{tag}: {a.GetType().Name}.{name}", action);
        }
    }

    private static void HugeArrayAfterDispose()
    {
        var array = new HugeArray<int>(1 << 19);
        array.Fill(3);
        array.Dispose();
        HugeArrayMembersThrow("disposed", array);
        OnThreads(4, t => HugeArrayMembersThrow($"thread {t}", array));
        Check.NoThrow("Dispose again", array.Dispose);
    }

    internal static void HugeArrayMembersThrow(string tag, HugeArray<int> a)
    {
        Check.True(!a.IsValid, $"{tag}: IsValid false");
        Check.Equal(-1, a.AcquireCount, $"{tag}: AcquireCount");
        NativeBufferMembersThrow(tag, a);
        foreach ((string name, Action action) in new (string, Action)[]
        {
            ("this[0] get", () => _ = a[0]),
            ("this[0] set", () => a[0] = 1),
            ("this[last] get", () => _ = a[a.Length - 1]),
            ("this[-1] get", () => _ = a[-1L]),
            ("this[Length] set", () => a[a.Length] = 1),
            ("CopyTo", () => a.CopyTo(new int[64], 0)),
            ("CopyFrom", () => a.CopyFrom(new int[1], 0)),
            ("ParallelVectorFill", () => a.ParallelVectorFill(1)),
            ("ParallelVectorAdd", () => a.ParallelVectorAdd(1)),
            ("ParallelVectorMultiply", () => a.ParallelVectorMultiply(2)),
            ("ParallelVectorSum", () => a.ParallelVectorSum()),
            ("ParallelVectorMin", () => a.ParallelVectorMin()),
            ("ParallelVectorMax", () => a.ParallelVectorMax()),
        })
        {
            Check.ThrowsExactly<ObjectDisposedException>($"{tag}: HugeArray.{name}", action);
        }
    }

    private static void Reuse()
    {
        var first = new FixedBuffer<int>(1);
        FixedBuffer<int> stale = first;
        AllocationHandle staleHandle = first.Handle;
        first.Free();
        var staleText = new FixedUtf8String("x");
        FixedUtf8String staleTextCopy = staleText;
        staleText.Free();

        const int cycles = 2_000_000;
        var seen = new HashSet<AllocationHandle>();
        for (int i = 0; i < cycles; i++)
        {
            var next = new FixedBuffer<int>(1);
            if (next.Handle == staleHandle || stale.IsValid || staleHandle.IsValid)
            {
                Check.Fail("generation", $"cycle {i}: a stale copy became valid again");
                next.Free();
                break;
            }

            if (i < 1000)
            {
                seen.Add(next.Handle);
            }

            if (i % 50_000 == 0)
            {
                next[0] = 7;
                Check.ThrowsExactly<ObjectDisposedException>($"cycle {i}: stale[0]", () => _ = stale[0]);
                Check.ThrowsExactly<ObjectDisposedException>($"cycle {i}: stale[0] = 1", () => stale[0] = 1);
                Check.ThrowsExactly<ObjectDisposedException>($"cycle {i}: stale.Free", stale.Free);
                Check.ThrowsExactly<ObjectDisposedException>($"cycle {i}: stale string", () => staleTextCopy.ToString());
                Check.Equal(7, next[0], $"cycle {i}: new buffer untouched");
            }

            next.Free();
        }

        Check.Equal(1000, seen.Count, "every reuse of the slot has a handle never seen before");
    }

    private static void DoubleFree()
    {
        var buffer = new FixedBuffer<long>(8);
        FixedBuffer<long> copy = buffer;
        buffer.Free();
        Check.ThrowsExactly<ObjectDisposedException>("FixedBuffer second Free", buffer.Free);
        Check.ThrowsExactly<ObjectDisposedException>("FixedBuffer Free through a copy", copy.Free);

        var text = new FixedUtf8String("twice");
        FixedUtf8String textCopy = text;
        text.Free();
        Check.ThrowsExactly<ObjectDisposedException>("FixedUtf8String second Free", textCopy.Free);

        var array = new SafeArray<long>(8);
        array.Dispose();
        Check.NoThrow("SafeArray second Dispose", array.Dispose);
        var huge = new HugeArray<long>(8);
        huge.Dispose();
        Check.NoThrow("HugeArray second Dispose", huge.Dispose);

        // A second free must never free someone else's memory: a buffer that took the freed memory
        // (or slot) survives the stale copy's Free.
        var next = new FixedBuffer<long>(8);
        next.Fill(42);
        Check.ThrowsExactly<ObjectDisposedException>("stale Free after reuse", copy.Free);
        Check.True(next.IsValid && next.VectorSum() == 42 * 8, "reused buffer survives a stale Free");
        next.Free();
    }

    private static void OverRelease()
    {
        var buffer = new FixedBuffer<int>(4);
        Check.ThrowsExactly<InvalidOperationException>("Release never acquired", buffer.Release);
        buffer.Acquire();
        buffer.Acquire();
        buffer.Release();
        buffer.Release();
        Check.ThrowsExactly<InvalidOperationException>("third Release of two Acquires", buffer.Release);
        Check.Equal(0, buffer.AcquireCount, "AcquireCount after over-release");
        buffer[0] = 5;
        Check.Equal(5, buffer[0], "usable after over-release");
        Check.NoThrow("Free after over-release", buffer.Free);

        var array = new SafeArray<int>(4);
        Check.ThrowsExactly<InvalidOperationException>("SafeArray Release never acquired", array.Release);
        Check.NoThrow("SafeArray Dispose after over-release", array.Dispose);

        var text = new FixedUtf8String("x");
        Check.ThrowsExactly<InvalidOperationException>("FixedUtf8String Release never acquired", text.Release);
        text.Free();
    }

    private static void FreeWhileAcquired()
    {
        var buffer = new FixedBuffer<int>(4);
        buffer.Fill(9);
        buffer.Acquire();
        Check.ThrowsExactly<InvalidOperationException>("Free while acquired", buffer.Free);
        OnThreads(2, t => Check.ThrowsExactly<InvalidOperationException>($"Free while acquired, thread {t}", buffer.Free));
        Check.True(buffer.IsValid && buffer.VectorSum() == 36, "intact after refused Free");
        buffer.Release();
        Check.NoThrow("Free after Release", buffer.Free);

        var array = new SafeArray<int>(4);
        array.Fill(9);
        array.Acquire();
        Check.ThrowsExactly<InvalidOperationException>("SafeArray Dispose while acquired", array.Dispose);
        Check.True(array.IsValid && !array.IsClosed && array[3] == 9, "SafeArray intact after refused Dispose");
        array.Release();
        Check.NoThrow("SafeArray Dispose after Release", array.Dispose);
        Check.True(!array.IsValid, "SafeArray invalid after Dispose");

        var text = new FixedUtf8String("held");
        text.Acquire();
        Check.ThrowsExactly<InvalidOperationException>("FixedUtf8String Free while acquired", text.Free);
        Check.Equal("held", text.ToString(), "string intact");
        text.Release();
        text.Free();
    }

    private static void FreeWhileLeased()
    {
        var buffer = new FixedBuffer<int>(4);
        using (MemoryLease<int> lease = buffer.Lease())
        {
            lease.Span.Fill(3);
            Check.ThrowsExactly<InvalidOperationException>("FixedBuffer Free while leased", buffer.Free);
            OnThreads(2, t => Check.ThrowsExactly<InvalidOperationException>($"Free while leased, thread {t}", buffer.Free));
            Check.Equal(3, lease[3], "lease usable after refused Free");
            Check.True(lease.IsOpen, "lease still open");
        }

        Check.NoThrow("Free after the lease", buffer.Free);

        var array = new HugeArray<int>(1000);
        using (MemoryLease<int> lease = array.Lease())
        {
            Check.ThrowsExactly<InvalidOperationException>("HugeArray Dispose while leased", array.Dispose);
            lease.Span.Fill(2);
        }

        Check.Equal(2000, array.VectorSum(), "HugeArray intact");
        array.Dispose();

        var text = new FixedUtf8String("leased");
        using (ReadOnlyMemoryLease<byte> lease = text.Lease())
        {
            Check.ThrowsExactly<InvalidOperationException>("FixedUtf8String Free while leased", text.Free);
            Check.Equal(6, lease.Span.Length, "string lease length");
        }

        text.Free();
    }

    private static void LeaseCopies()
    {
        var buffer = new FixedBuffer<int>(4);
        MemoryLease<int> first = buffer.Lease();
        MemoryLease<int> copy = first;
        MemoryLease<int> second = buffer.Lease();
        Check.Equal(2, buffer.Handle.LeaseCount, "two leases open");
        first.Dispose();
        copy.Dispose();
        first.Dispose();
        Check.Equal(1, buffer.Handle.LeaseCount, "a lease disposed three times through copies closes once");
        Check.True(!first.IsOpen && !copy.IsOpen, "disposed lease and its copy report closed");
        Check.True(second.IsOpen, "the other holder's lease is still open");
        Check.ThrowsExactly<InvalidOperationException>("Free under the other holder's lease", buffer.Free);

        // Using a disposed lease throws (whichever copy).
        Exception? caught = null;
        try { _ = copy.Span.Length; } catch (Exception e) { caught = e; }
        Check.Caught<ObjectDisposedException>("disposed lease .Span", caught);
        caught = null;
        try { _ = copy[0]; } catch (Exception e) { caught = e; }
        Check.Caught<ObjectDisposedException>("disposed lease [0]", caught);
        caught = null;
        try { _ = first.Pointer; } catch (Exception e) { caught = e; }
        Check.Caught<ObjectDisposedException>("disposed lease .Pointer", caught);
        caught = null;
        try { _ = first.AsSpan(0, 1).Length; } catch (Exception e) { caught = e; }
        Check.Caught<ObjectDisposedException>("disposed lease AsSpan", caught);
        caught = null;
        try { _ = LeaseChunks(first); } catch (Exception e) { caught = e; }
        Check.Caught<ObjectDisposedException>("disposed lease GetChunks", caught);

        second.Dispose();
        Check.Equal(0, buffer.Handle.LeaseCount, "no lease left");
        // A stale lease copy disposed after the buffer is freed and its slot reused must not close
        // the new owner's lease.
        buffer.Free();
        var next = new FixedBuffer<int>(4);
        MemoryLease<int> nextLease = next.Lease();
        copy.Dispose();
        second.Dispose();
        Check.Equal(1, next.Handle.LeaseCount, "stale lease copies never close another buffer's lease");
        Check.ThrowsExactly<InvalidOperationException>("Free under a lease after stale disposals", next.Free);
        nextLease.Dispose();
        next.Free();

        var array = new SafeArray<int>(4);
        MemoryLease<int> arrayLease = array.Lease();
        MemoryLease<int> arrayCopy = arrayLease;
        arrayLease.Dispose();
        arrayCopy.Dispose();
        Check.Equal(0, array.Handle.LeaseCount, "SafeArray lease copies close once");
        Check.NoThrow("SafeArray Dispose after the lease", array.Dispose);
        arrayCopy.Dispose();

        // Release() never closes a lease.
        var held = new FixedBuffer<int>(4);
        MemoryLease<int> heldLease = held.Lease();
        Check.ThrowsExactly<InvalidOperationException>("Release while only leased", held.Release);
        Check.Equal(1, held.Handle.LeaseCount, "Release left the lease");
        heldLease.Dispose();
        held.Free();
    }

    private static int LeaseSpanLength(MemoryLease<int> lease) => lease.Span.Length;

    private static int LeaseElement(MemoryLease<int> lease, long index) => lease[index];

    private static int LeaseChunks(MemoryLease<int> lease)
    {
        int n = 0;
        foreach (Span<int> chunk in lease.GetChunks())
        {
            n += chunk.Length;
        }

        return n;
    }

    private static void DefaultValues()
    {
        MemoryLease<int> lease = default;
        Check.True(!lease.IsOpen, "default lease not open");
        Check.Equal(0L, lease.Length, "default lease length");
        Check.NoThrow("default lease Dispose twice", () => { MemoryLease<int> l = default; l.Dispose(); l.Dispose(); });
        Check.Throws<Exception>("default lease [0]", () => _ = LeaseElement(default, 0));
        Check.NoThrow("default lease Span is empty", () => Check.Equal(0, LeaseSpanLength(default), "default lease span length"));
        ReadOnlyMemoryLease<byte> readOnly = default;
        Check.True(!readOnly.IsOpen, "default read-only lease not open");
        Check.NoThrow("default read-only lease Dispose", () => { ReadOnlyMemoryLease<byte> l = default; l.Dispose(); l.Dispose(); });

        FixedBuffer<int> none = default;
        Check.Equal(0, none.Length, "default FixedBuffer Length");
        Check.True(!none.IsValid, "default FixedBuffer not valid");
        Check.Throws<IndexOutOfRangeException>("default FixedBuffer [0]", () => _ = none[0]);
        Check.ThrowsExactly<ObjectDisposedException>("default FixedBuffer Lease", () => { using MemoryLease<int> l = none.Lease(); });
        Check.ThrowsExactly<ObjectDisposedException>("default FixedBuffer Free", none.Free);
        Check.ThrowsExactly<ObjectDisposedException>("default FixedBuffer Acquire", none.Acquire);
        Check.ThrowsExactly<ObjectDisposedException>("default FixedBuffer Fill", () => none.Fill(1));
        Check.ThrowsExactly<ObjectDisposedException>("default FixedBuffer VectorSum", () => none.VectorSum());
        Check.NoThrow("default FixedBuffer foreach", () => { foreach (int _ in none) { } });

        FixedUtf8String empty = default;
        Check.Equal(0, empty.Length, "default FixedUtf8String Length");
        Check.Equal(string.Empty, empty.ToString(), "default FixedUtf8String ToString");
        Check.ThrowsExactly<ObjectDisposedException>("default FixedUtf8String Free", empty.Free);
        Check.ThrowsExactly<ObjectDisposedException>("default FixedUtf8String Acquire", empty.Acquire);
        Check.ThrowsExactly<ObjectDisposedException>("default FixedUtf8String Pointer", () => _ = empty.Pointer);
        Check.NoThrow("default FixedUtf8String Lease", () => { using ReadOnlyMemoryLease<byte> l = empty.Lease(); Check.True(!l.IsOpen, "default string lease not open"); });

        AllocationHandle handle = default;
        Check.True(!handle.IsValid && handle.AcquireCount == -1 && handle.LeaseCount == -1, "default AllocationHandle is invalid");
    }

    private static void TwoParties()
    {
        // Leases are per holder: B's extra disposals and Releases never cancel A's lease.
        var buffer = new FixedBuffer<int>(4);
        MemoryLease<int> a = buffer.Lease();
        MemoryLease<int> b = buffer.Lease();
        b.Dispose();
        b.Dispose();
        Check.ThrowsExactly<InvalidOperationException>("B's Release with no Acquire", buffer.Release);
        Check.ThrowsExactly<InvalidOperationException>("Free while A holds a lease", buffer.Free);
        Check.True(a.IsOpen, "A's lease open");
        a.Dispose();
        buffer.Free();

        // Acquire/Release is one shared count (the 2018 API): report what it gives.
        var shared = new FixedBuffer<int>(4);
        shared.Acquire(); // party A
        shared.Acquire(); // party B
        shared.Release(); // B
        shared.Release(); // B again, by mistake
        try
        {
            shared.Free();
            Check.Info("INFO Acquire/Release is one shared count: B's second Release cancelled A's Acquire and Free succeeded under A (documented: use Lease() per holder)");
        }
        catch (InvalidOperationException e)
        {
            Check.Info($"INFO Acquire/Release per party: Free refused ({e.Message})");
            shared.Release();
            shared.Free();
        }
    }

    private static void CountLimits()
    {
        var buffer = new FixedBuffer<int>(1);
        int acquired = 0;
        try
        {
            for (; acquired < 40_000; acquired++)
            {
                buffer.Acquire();
            }

            Check.Fail("Acquire limit", "40,000 Acquire calls all succeeded; the count must refuse rather than overflow into the lease bits");
        }
        catch (InvalidOperationException e) when (e is not ObjectDisposedException)
        {
            Check.Equal(acquired, buffer.AcquireCount, "AcquireCount at the limit");
            Check.Equal(0, buffer.Handle.LeaseCount, "no lease counted by Acquire overflow");
        }

        for (int i = 0; i < acquired; i++)
        {
            buffer.Release();
        }

        Check.ThrowsExactly<InvalidOperationException>("Release past zero after the limit", buffer.Release);

        // Leases: many open at once, then the limit refuses cleanly.
        var leases = new List<int>();
        int opened = 0;
        try
        {
            for (; opened < 40_000; opened++)
            {
                OpenAndForget(buffer);
            }

            Check.Fail("Lease limit", "40,000 leases all opened; the count must refuse rather than overflow");
        }
        catch (InvalidOperationException e) when (e is not ObjectDisposedException)
        {
            Check.Equal(opened, buffer.Handle.LeaseCount, "LeaseCount at the limit");
            Check.Equal(0, buffer.AcquireCount, "no acquisition counted by lease overflow");
        }

        Check.ThrowsExactly<InvalidOperationException>("Free while at the lease limit", buffer.Free);
        Check.True(buffer.IsValid, "still valid at the limit");
        _ = leases;
    }

    // A lease opened and never disposed (the holder forgot it): it keeps the buffer.
    private static void OpenAndForget(FixedBuffer<int> buffer) => _ = buffer.Lease();

    // A chunk enumerator taken from a lease, then the lease disposed by hand and the buffer freed:
    // the enumerator's next step must throw, not make a span over the freed block.
    private static void ChunksAfterLeaseDispose()
    {
        var buffer = new FixedBuffer<int>(100);
        var victim = new FixedBuffer<int>(100);
        victim.Fill(42);
        Exception? caught = null;
        long touched = 0;
        MemoryLease<int> lease = buffer.Lease();
        MemoryLease<int>.ChunkEnumerator chunks = lease.GetChunks(10);
        lease.Dispose();
        buffer.Free();
        try
        {
            while (chunks.MoveNext())
            {
                chunks.Current.Fill(-1);
                touched += chunks.Current.Length;
            }
        }
        catch (Exception e)
        {
            caught = e;
        }

        Check.Caught<ObjectDisposedException>("ChunkEnumerator.MoveNext after the lease was disposed", caught);
        Check.Equal(0L, touched, "elements written through chunks made after the lease was disposed");
        Check.Equal(42 * 100, victim.VectorSum(), "a live buffer is not written by a stale chunk");
        victim.Free();
    }

    // An acquired array whose last managed reference is dropped: the finalizer runs, yet the memory
    // stays allocated (a leak the ledger shows), so the acquirer's pointer still reads what it wrote
    // and no later allocation of the same size receives the block.
    private static unsafe void AcquireKeepsMemory(bool huge)
    {
        const int length = 1024;
        var options = new AllocationOptions(MallocxFlags.NoThreadCache);
        (nint pointer, AllocationHandle handle, WeakReference dropped) = AcquireAndDrop(huge, length, options);
        for (int round = 0; round < 20 && dropped.IsAlive; round++)
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }

        GC.Collect();
        GC.WaitForPendingFinalizers();
        Check.True(!dropped.IsAlive, "the dropped array was finalized and collected");

        // Without a thread cache a freed block goes straight back to its bin, so one of these would
        // receive it had the finalizer freed it.
        var others = new List<NativeBuffer<int>>();
        for (int i = 0; i < 256; i++)
        {
            others.Add(huge ? new HugeArray<int>(length, Victim, options) : new SafeArray<int>(length, Victim, options));
        }

        int* values = (int*)pointer;
        int changed = 0;
        for (int i = 0; i < length; i++)
        {
            if (values[i] != ExpectedAt(i))
            {
                changed++;
            }
        }

        Check.Equal(0, changed, "elements of the acquired array changed after its finalizer ran");
        Check.True(handle.IsValid, "the acquired array's memory is still live in the ledger");
        Check.Equal(1, handle.AcquireCount, "the acquired array's acquire count");
        Check.True(
            AllocationLedger.Snapshot().Any(a => a.Address == pointer && a.AcquireCount == 1),
            "the ledger lists the acquired, leaked block");
        Check.True(others.All(o => o.Pointer != pointer), "no later allocation received the acquired block");
        foreach (NativeBuffer<int> other in others)
        {
            other.Dispose();
        }
    }

    private static int ExpectedAt(int i) => (i * 13) ^ 0x0F0F;

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static (nint Pointer, AllocationHandle Handle, WeakReference Dropped) AcquireAndDrop(bool huge, int length, AllocationOptions options)
    {
        NativeBuffer<int> array = huge ? new HugeArray<int>(length, options) : new SafeArray<int>(length, options);
        using (MemoryLease<int> lease = array.Lease())
        {
            for (int i = 0; i < length; i++)
            {
                lease[i] = ExpectedAt(i);
            }
        }

        array.Acquire();
        return (array.Pointer, array.Handle, new WeakReference(array, trackResurrection: true));
    }

    // Without checked mode: what a span kept past its lease does (a finding for the report, not a
    // failure: the documentation leaves it to the user). Must not crash.
    private static void StaleSpanUnchecked()
    {
        AllocationLedger.CheckedMode = false;
        const int n = 256;
        var buffer = new FixedBuffer<byte>(n);
        buffer.Fill(0x5A);
        MemoryLease<byte> lease = buffer.Lease();
        Span<byte> stale = lease.Span;
        lease.Dispose();
        buffer.Free();
        var victim = new FixedBuffer<byte>(n);
        victim.Fill(0x77);
        stale[10] = 1;
        bool corrupted = victim[10] != 0x77;
        Check.Info($"INFO unchecked: a span kept past its lease's Dispose {(corrupted ? "WROTE INTO another live FixedBuffer (silent corruption)" : "did not reach the next buffer")}");
        victim.Free();
    }
}
