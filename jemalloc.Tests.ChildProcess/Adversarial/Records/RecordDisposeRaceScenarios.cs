using System.Runtime.CompilerServices;

namespace jemalloc.Tests.ChildProcess.Adversarial;

/// <summary>
/// Failure class: a store's own Reset racing its use on other threads: Replace on a second thread racing
/// the writer's Reset succeeds or throws as documented; scoped readers racing Reset read only live
/// values and block it while open.
/// </summary>
internal static class RecordDisposeRaceScenarios
{
    internal const string RecordsReplaceVsReset = "records-replace-vs-reset";
    internal const string RecordsScopedReadersVsReset = "records-scoped-readers-vs-reset";

    internal static void Register(Dictionary<string, Action> all)
    {
        all[RecordsReplaceVsReset] = ReplaceVsReset;
        all[RecordsScopedReadersVsReset] = ScopedReadersVsReset;
    }

    private static readonly TimeSpan Budget = TimeSpan.FromSeconds(2);

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

        // A reset wins only in a moment when neither reader is inside a scope; on a loaded 2-core
        // machine a reader preempted inside one can hold those moments off for a whole round, so the
        // race goes on for up to five rounds until one reset has won.
        for (int round = 0; round < 5 && Interlocked.Read(ref resets) == 0; round++)
        {
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
        }

        Check.Info($"INFO resets={resets} refused={refused} read={read}");
        Check.True(resets > 0, "Reset succeeded at times");
        using (store.EnterRead())
        {
            Check.ThrowsExactly<InvalidOperationException>("Reset with a scope open after the race", store.Reset);
        }

        Check.NoThrow("Reset once every scope is closed", store.Reset);
    }
}
