namespace jemalloc.Tests.ChildProcess.Adversarial;

/// <summary>
/// Failure class: an arena reset under the record types: after the reset, an index and a store in the
/// arena throw ObjectDisposedException; reads inside a read scope never see the reset under them, which
/// is refused while the scope is open.
/// </summary>
internal static class RecordArenaResetScenarios
{
    internal const string RecordsArenaReset = "records-arena-reset";
    internal const string RecordsScopeVsArenaReset = "records-scope-vs-arena-reset";

    internal static void Register(Dictionary<string, Action> all)
    {
        all[RecordsArenaReset] = ArenaReset;
        all[RecordsScopeVsArenaReset] = ScopeVsArenaReset;
    }

    private static readonly TimeSpan Budget = TimeSpan.FromSeconds(2);

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
}
