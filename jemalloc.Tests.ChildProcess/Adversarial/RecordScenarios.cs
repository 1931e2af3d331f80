using System.Runtime.CompilerServices;

namespace jemalloc.Tests.ChildProcess.Adversarial;

/// <summary>
/// The record types attacked: a stored string compared with a .NET string of more than
/// int.MaxValue / 3 characters; Replace on a second thread racing the writer's Reset; readers of a
/// NativeHashIndex racing growth, removal and Dispose; an index asked for int.MaxValue keys.
/// </summary>
internal static class RecordScenarios
{
    private static readonly TimeSpan Budget = TimeSpan.FromSeconds(2);

    internal static void Register(Dictionary<string, Action> all)
    {
        all["records-huge-string-compare"] = HugeStringCompare;
        all["records-replace-vs-reset"] = ReplaceVsReset;
        all["records-scoped-readers-vs-reset"] = ScopedReadersVsReset;
        all["records-index-readers-vs-writer"] = IndexReadersVsWriter;
        all["records-index-too-big"] = IndexTooBig;
        all["records-arena-reset"] = ArenaReset;
        all["records-scope-vs-arena-reset"] = ScopeVsArenaReset;
    }

    // Each UTF-16 code unit takes up to three UTF-8 bytes: for a text longer than int.MaxValue / 3
    // that bound no longer fits an int, and the comparison must still be right.
    private static void HugeStringCompare()
    {
        const int length = (int.MaxValue / 3) + 1000;
        string text = new('a', length);
        using var store = new Utf8StringStore();
        StoredUtf8String stored = store.Add(text);
        Check.Equal(length, stored.Length, "the huge string's stored length");
        Check.True(stored.Equals(text), "Equals(string) of a string longer than int.MaxValue / 3 characters");
        Check.True(stored.StartsWith(text), "StartsWith(string) of a prefix longer than int.MaxValue / 3 characters");
        text = null!;
        GC.Collect();
        text = string.Create(length, 0, (span, _) =>
        {
            span.Fill('a');
            span[^1] = 'b';
        });
        Check.True(!stored.Equals(text), "Equals(string) is false when the last character differs");
        Check.True(!stored.StartsWith(text), "StartsWith(string) is false when the last character differs");
    }

    // Replace on a thread that is not the writer: it may succeed, refuse as a second writer
    // (InvalidOperationException) or find the value reset (ArgumentException), never anything else,
    // and a value it returns holds the new text.
    private static void ReplaceVsReset()
    {
        using var store = new Utf8StringStore(Utf8StringStore.MinBlockSize, AllocationOptions.Default);
        var current = new StrongBox<StoredUtf8String>(default);
        long replaced = 0, refused = 0, stale = 0;
        Check.Race("Replace on a second thread vs Reset", Budget, int.MaxValue,
            i =>
            {
                try
                {
                    store.Reset();
                    Volatile.Write(ref current, new StrongBox<StoredUtf8String>(store.Add("old")));
                }
                catch (InvalidOperationException)
                {
                    // The other thread's Replace was writing.
                }
            },
            i =>
            {
                StoredUtf8String old = Volatile.Read(ref current).Value;
                try
                {
                    StoredUtf8String value = store.Replace(old, "new");
                    // Read under a scope: a reset in the middle of an unscoped read is the caller's data race.
                    string text = "new";
                    using (store.EnterRead())
                    {
                        if (value.IsValid)
                        {
                            text = value.ToString();
                        }
                    }

                    Check.Equal("new", text, "the value Replace returned");
                    Interlocked.Increment(ref replaced);
                }
                catch (ArgumentException)
                {
                    Interlocked.Increment(ref stale);
                }
                catch (InvalidOperationException)
                {
                    Interlocked.Increment(ref refused);
                }
            });
        Check.Info($"INFO replaced={replaced} refused={refused} stale={stale}");
    }

    // Readers inside EnterRead scopes (opened and closed on every read, copies disposed twice) while
    // the writer resets and refills: a value valid inside a scope always reads its own text, Reset
    // either frees (no scope open) or refuses, and a second Dispose of a copy always throws.
    private static void ScopedReadersVsReset()
    {
        using var store = new Utf8StringStore(Utf8StringStore.MinBlockSize, AllocationOptions.Default);
        var current = new StrongBox<(StoredUtf8String Value, string Text)>((default, ""));
        long resets = 0, refused = 0, read = 0;
        void Reader(int i)
        {
            StringStoreReadScope scope = store.EnterRead();
            StringStoreReadScope copy = scope;
            (StoredUtf8String value, string text) = Volatile.Read(ref current).Value;
            if (value.IsValid)
            {
                Check.Equal(text, value.ToString(), "a value read inside a scope");
                Interlocked.Increment(ref read);
            }

            scope.Dispose();
            if (i % 64 == 0)
            {
                Check.ThrowsExactly<InvalidOperationException>("a second Dispose through a copy", copy.Dispose);
            }
        }

        Check.Race("scoped readers vs Reset", Budget, int.MaxValue,
            i =>
            {
                try
                {
                    store.Reset();
                    Interlocked.Increment(ref resets);
                }
                catch (InvalidOperationException)
                {
                    Interlocked.Increment(ref refused);
                }

                string text = $"text {i}";
                Volatile.Write(ref current, new StrongBox<(StoredUtf8String, string)>((store.Add(text), text)));
            },
            Reader,
            Reader);
        Check.Info($"INFO resets={resets} refused={refused} read={read}");
        Check.True(resets > 0, "Reset succeeded at times");
        using (store.EnterRead())
        {
            Check.ThrowsExactly<InvalidOperationException>("Reset with a scope open after the race", store.Reset);
        }

        Check.NoThrow("Reset once every scope is closed", store.Reset);
    }

    // Keys 0..Stable-1 are always present with value 2*key; the writer adds and removes the others
    // (the table grows and shrinks its runs), then disposes. Readers only ever see 2*key or nothing,
    // and after the dispose only ObjectDisposedException.
    private static void IndexReadersVsWriter()
    {
        const int stable = 1000;
        long rounds = 0;
        var stopwatch = System.Diagnostics.Stopwatch.StartNew();
        while (stopwatch.Elapsed < Budget)
        {
            var index = new NativeHashIndex<long>();
            for (long k = 0; k < stable; k++)
            {
                index.Add(k, 2 * k);
            }

            var disposed = new StrongBox<bool>(false);
            Check.Race("NativeHashIndex readers vs growth, removal and Dispose", TimeSpan.FromMilliseconds(300), 1,
                round =>
                {
                    for (long k = stable; k < stable + 20_000; k++)
                    {
                        index.Add(k, 2 * k);
                        if (k % 3 == 0)
                        {
                            _ = index.Remove(k - 1);
                        }
                    }

                    for (long k = stable; k < stable + 20_000; k++)
                    {
                        _ = index.Remove(k);
                    }

                    Volatile.Write(ref disposed.Value, true);
                    index.Dispose();
                },
                round => Read(index, stable, disposed),
                round => Read(index, stable, disposed));
            rounds++;
        }

        Check.Info($"INFO rounds={rounds}");
    }

    private static void Read(NativeHashIndex<long> index, int stable, StrongBox<bool> disposed)
    {
        var random = new Random(Environment.CurrentManagedThreadId);
        while (true)
        {
            bool wasDisposed = Volatile.Read(ref disposed.Value);
            long key = random.Next(stable + 20_000);
            bool found;
            long value;
            try
            {
                found = index.TryGetValue(key, out value);
            }
            catch (ObjectDisposedException)
            {
                Check.True(Volatile.Read(ref disposed.Value), "ObjectDisposedException only after Dispose");
                return;
            }

            if (found && value != 2 * key)
            {
                Check.Fail("NativeHashIndex reader", $"key {key} read {value}, expected {2 * key}");
            }

            if (key < stable && !found && !wasDisposed)
            {
                Check.Fail("NativeHashIndex reader", $"the always-present key {key} was not found");
            }
        }
    }

    // An arena reset frees an index's table and a store's blocks under them: every later use throws
    // ObjectDisposedException (never hangs, never writes to the freed memory, which the victims reuse).
    private static void ArenaReset()
    {
        using var arena = new JemArena();
        var index = new NativeHashIndex<long>(1000, arena.Options);
        index.Add(1, 10);
        var store = new Utf8StringStore(Utf8StringStore.MinBlockSize, arena.Options);
        StoredUtf8String value = store.Add("before");
        arena.Reset();
        using var victims = new SafeArray<long>(4096, 0x5A5A5A5A5A5A5A5AL, arena.Options);
        using var storeVictims = new SafeArray<byte>(Utf8StringStore.MinBlockSize, 0x5A, arena.Options);

        var lookup = Task.Run(() => index.TryGetValue(1, out _));
        try
        {
            if (!lookup.Wait(TimeSpan.FromSeconds(5)))
            {
                Check.Fail("TryGetValue after an arena reset", "hung for 5 s");
                Check.Info("DONE");
                Environment.Exit(0);
            }

            Check.Fail("TryGetValue after an arena reset", $"returned {lookup.Result}");
        }
        catch (AggregateException e) when (e.InnerException is ObjectDisposedException)
        {
            Check.Pass();
        }

        Check.Throws<ObjectDisposedException>("index Add after an arena reset", () => index.Add(2, 20));
        Check.Throws<ObjectDisposedException>("index Set after an arena reset", () => index.Set(1, 11));
        Check.Throws<ObjectDisposedException>("index Remove after an arena reset", () => index.Remove(1));
        Check.Throws<ObjectDisposedException>("index Clear after an arena reset", index.Clear);
        Check.NoThrow("index Dispose after an arena reset", index.Dispose);
        Check.Throws<ObjectDisposedException>("a stored value after an arena reset", () => value.ToString());
        Check.Throws<ObjectDisposedException>("store Add after an arena reset", () => store.Add("after"));
        Check.True(!victims.ToArray().Any(v => v != 0x5A5A5A5A5A5A5A5AL), "the index's freed table was never written");
        Check.True(!storeVictims.ToArray().Any(v => v != 0x5A), "the store's freed block was never written");
        Check.NoThrow("store Dispose after an arena reset", store.Dispose);
    }

    private sealed record PublishedStore(Utf8StringStore Store, StoredUtf8String[] Values);

    private static PublishedStore? s_published;

    // A reader copies a store's strings inside an EnterRead scope while the owner resets the store's
    // arena and fills it with 'Z' arrays (which land where the blocks were): the scope holds the reset
    // back, so every read inside it sees the stored 'A's (never 'Z' nor checked mode's poison), and a
    // scope opened after the reset throws ObjectDisposedException.
    private static void ScopeVsArenaReset()
    {
        using var arena = new JemArena();
        string text = new('A', 60);
        long resets = 0, refused = 0, scopedReads = 0, scopesRefused = 0;
        Check.RaceUntilMet("read scope vs arena reset", Budget,
            () => Volatile.Read(ref refused) > 100 && Volatile.Read(ref scopedReads) > 1000 && Volatile.Read(ref scopesRefused) > 10, int.MaxValue,
            i =>
            {
                var store = new Utf8StringStore(Utf8StringStore.MinBlockSize, arena.Options);
                var values = new StoredUtf8String[40];
                for (int v = 0; v < values.Length; v++)
                {
                    values[v] = store.Add(text);
                }

                Volatile.Write(ref s_published, new PublishedStore(store, values));
                Thread.SpinWait(i % 500);
                Interlocked.Add(ref refused, Check.UntilNotRefused(arena.Reset));
                Interlocked.Increment(ref resets);
                for (int k = 0; k < 8; k++)
                {
                    using SafeArray<byte> next = arena.CreateArray<byte>(Utf8StringStore.MinBlockSize);
                    next.Fill((byte)'Z');
                }

                // A reader's EnterRead that the reset refuses counts itself for a moment: the
                // dispose may be refused while it does, as beside any scope.
                _ = Check.UntilNotRefused(store.Dispose);
            },
            i =>
            {
                PublishedStore? published = Volatile.Read(ref s_published);
                if (published is null)
                {
                    return;
                }

                Span<byte> copy = stackalloc byte[64];
                try
                {
                    using StringStoreReadScope scope = published.Store.EnterRead();
                    for (int k = 0; k < 200; k++)
                    {
                        StoredUtf8String value = published.Values[k % published.Values.Length];
                        value.CopyTo(copy);
                        if (copy[..value.Length].ContainsAnyExcept((byte)'A'))
                        {
                            Check.Fail("reads inside a read scope while the arena is reset", $"iteration {i}: read 0x{copy[copy[..value.Length].IndexOfAnyExcept((byte)'A')]:X2} instead of 'A': the reset freed the block under the scope");
                            return;
                        }

                        Interlocked.Increment(ref scopedReads);
                    }
                }
                catch (ObjectDisposedException)
                {
                    // The reset came first: the scope was never opened.
                    Interlocked.Increment(ref scopesRefused);
                }
            });
        Volatile.Write(ref s_published, null);
        Check.Info($"INFO resets={resets} refused-while-scoped={refused} scoped-reads={scopedReads} scopes-after-reset={scopesRefused}");
        Check.True(refused > 0, "resets met open read scopes", "no reset was ever refused: the race did not happen");
        Check.True(scopedReads > 0, "reads ran inside scopes", "no read ran inside a scope");
        Check.True(scopesRefused > 0, "scopes met reset stores", "no scope ever met a reset store: the race did not happen");
        Check.Equal(0L, arena.UsedBytes, "the arena is empty: every store was disposed after its reset");

        // The arena's Dispose is held back the same way (in checked mode it takes its own path).
        var last = new Utf8StringStore(Utf8StringStore.MinBlockSize, arena.Options);
        StoredUtf8String kept = last.Add(text);
        using (last.EnterRead())
        {
            Check.ThrowsExactly<InvalidOperationException>("the arena's Dispose with a read scope open", arena.Dispose);
            Check.True(!arena.IsDisposed && kept.ToString() == text, "the refused Dispose freed nothing");
        }

        last.Dispose();
    }

    // int.MaxValue keys need a table of 2^32 entries of 16 bytes: more than the machine has, so an
    // OutOfMemoryException at once, never a process killed while zero-filling it.
    private static void IndexTooBig()
    {
        Check.Info($"INFO physical+swap={TooBigScenarios.PhysicalPlusSwap():N0} bytes");
        long live = AllocationLedger.LiveCount;
        try
        {
            using var index = new NativeHashIndex<long>(int.MaxValue, AllocationOptions.Default);
            Check.True(index.Capacity >= int.MaxValue, "an index for int.MaxValue keys has room for them");
        }
        catch (OutOfMemoryException e)
        {
            Check.Info($"RESULT OutOfMemoryException: {e.Message}");
            Check.Pass();
        }

        Check.Throws<ArgumentOutOfRangeException>("an expected count beyond long.MaxValue / 64", () => new NativeHashIndex<long>(long.MaxValue, AllocationOptions.Default).Dispose());
        Check.Throws<ArgumentOutOfRangeException>("a negative expected count", () => new NativeHashIndex<long>(-1, AllocationOptions.Default).Dispose());
        Check.Throws<OutOfMemoryException>("the largest expected count", () => new NativeHashIndex<long>(long.MaxValue / 64, AllocationOptions.Default).Dispose());
        Check.Equal(live, AllocationLedger.LiveCount, "nothing left in the ledger by the refused tables");
    }
}
