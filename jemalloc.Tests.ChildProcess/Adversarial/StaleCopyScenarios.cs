namespace jemalloc.Tests.ChildProcess.Adversarial;

/// <summary>
/// Stale copies: after Free, Dispose or an arena reset, every public member of every structure, called
/// through any copy and on any thread, throws <see cref="ObjectDisposedException"/> (or answers
/// "not valid" where the member is a query).
/// </summary>
internal static class StaleCopyScenarios
{
    internal static void Register(Dictionary<string, Action> all)
    {
        all["stale-fixedbuffer"] = FixedBufferAfterFree;
        all["stale-utf8string"] = Utf8StringAfterFree;
        all["stale-safearray"] = SafeArrayAfterDispose;
        all["stale-hugearray"] = HugeArrayAfterDispose;
        all["stale-arena-reset"] = () => AfterArena(dispose: false);
        all["stale-arena-dispose"] = () => AfterArena(dispose: true);
    }

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

    private static void NativeBufferMembersThrow(string tag, NativeBuffer<int> a)
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

    private static void AfterArena(bool dispose)
    {
        var arena = new JemArena();
        FixedBuffer<int> buffer = arena.CreateBuffer<int>(16);
        FixedBuffer<int> copy = buffer;
        SafeArray<int> array = arena.CreateArray<int>(32);
        HugeArray<int> huge = arena.CreateHugeArray<int>(1 << 19);
        buffer.Fill(1);
        array.Fill(2);
        huge.Fill(3);
        // A structure outside the arena, which the reset must not touch.
        var outside = new FixedBuffer<int>(16);
        outside.Fill(4);

        if (dispose)
        {
            arena.Dispose();
        }
        else
        {
            arena.Reset();
        }

        string tag = dispose ? "after arena Dispose" : "after arena Reset";
        FixedBufferMembersThrow(tag, buffer);
        FixedBufferMembersThrow(tag + " (copy)", copy);
        SafeArrayMembersThrow(tag, array);
        HugeArrayMembersThrow(tag, huge);
        OnThreads(2, t =>
        {
            FixedBufferMembersThrow($"{tag} thread {t}", copy);
            SafeArrayMembersThrow($"{tag} thread {t}", array);
        });
        Check.True(outside.SequenceEqual(Enumerable.Repeat(4, 16).ToArray()), $"{tag}: structure outside the arena intact");

        // Disposing the invalidated arrays afterwards is harmless (no double free), and new
        // structures in a reset arena are independent of the old ones.
        Check.NoThrow($"{tag}: Dispose invalidated SafeArray", array.Dispose);
        Check.NoThrow($"{tag}: Dispose invalidated HugeArray", huge.Dispose);
        if (!dispose)
        {
            FixedBuffer<int> fresh = arena.CreateBuffer<int>(16);
            using SafeArray<int> freshArray = arena.CreateArray<int>(32);
            fresh.Fill(5);
            freshArray.Fill(6);
            FixedBufferMembersThrow(tag + " after new allocations", copy);
            SafeArrayMembersThrow(tag + " after new allocations", array);
            Check.True(fresh.SequenceEqual(Enumerable.Repeat(5, 16).ToArray()), "new arena buffer intact");
            Check.True(freshArray.SequenceEqual(Enumerable.Repeat(6, 32).ToArray()), "new arena array intact");
            fresh.Free();
            freshArray.Dispose();
            arena.Dispose();
        }
        else
        {
            Check.True(arena.IsDisposed, "arena IsDisposed");
            foreach ((string name, Action action) in new (string, Action)[]
            {
                ("CreateBuffer", () => arena.CreateBuffer<int>(1)),
                ("CreateArray", () => arena.CreateArray<int>(1)),
                ("CreateHugeArray", () => arena.CreateHugeArray<int>(1)),
                ("FixedBuffer with its Options", () => _ = new FixedBuffer<int>(1, arena.Options)),
                ("Reset", arena.Reset),
                ("Purge", arena.Purge),
                ("Decay", arena.Decay),
                ("GetStatistics", () => arena.GetStatistics()),
                ("DirtyDecayMilliseconds", () => _ = arena.DirtyDecayMilliseconds),
                ("MuzzyDecayMilliseconds set", () => arena.MuzzyDecayMilliseconds = 0),
                ("Allocate", () => AllocateRaw(arena)),
            })
            {
                Check.ThrowsExactly<ObjectDisposedException>($"destroyed JemArena.{name}", action);
            }

            Check.NoThrow("JemArena.Dispose again", arena.Dispose);
        }

        outside.Free();
    }

    private static unsafe void AllocateRaw(JemArena arena) => _ = arena.Allocate(16);

    internal static void OnThreads(int count, Action<int> action)
    {
        var threads = Enumerable.Range(0, count).Select(t => new Thread(() =>
        {
            try
            {
                action(t);
            }
            catch (Exception e)
            {
                Check.Fail($"thread {t}", $"{e.GetType().Name}: {e.Message}");
            }
        })).ToArray();
        foreach (Thread thread in threads)
        {
            thread.Start();
        }

        foreach (Thread thread in threads)
        {
            thread.Join();
        }
    }
}
