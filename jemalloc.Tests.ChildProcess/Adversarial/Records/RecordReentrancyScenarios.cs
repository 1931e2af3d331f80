namespace jemalloc.Tests.ChildProcess.Adversarial;

/// <summary>
/// Failure class: re-entrancy, keys whose Equals or GetHashCode re-enter the index (dispose, add,
/// remove, look up) are refused and nothing hangs; keys whose callbacks throw leave the index exactly as
/// before.
/// </summary>
internal static class RecordReentrancyScenarios
{
    internal const string RecordsThrowingCallbacks = "records-throwing-callbacks";
    internal const string RecordsReentrantDisposeInEquals = "records-reentrant-dispose-in-equals";
    internal const string RecordsReentrantAddInEquals = "records-reentrant-add-in-equals";
    internal const string RecordsReentrantRemoveInEquals = "records-reentrant-remove-in-equals";
    internal const string RecordsReentrantLookupInEquals = "records-reentrant-lookup-in-equals";
    internal const string RecordsReentrantDisposeInHash = "records-reentrant-dispose-in-hash";
    internal const string RecordsReentrantAddInHash = "records-reentrant-add-in-hash";
    internal const string RecordsReentrantRemoveInHash = "records-reentrant-remove-in-hash";
    internal const string RecordsReentrantLookupInHash = "records-reentrant-lookup-in-hash";

    internal static void Register(Dictionary<string, Action> all)
    {
        all[RecordsThrowingCallbacks] = ThrowingCallbacks;
        all[RecordsReentrantDisposeInEquals] = () => Reentrant(Callback.Equals, Inner.Dispose);
        all[RecordsReentrantAddInEquals] = () => Reentrant(Callback.Equals, Inner.Add);
        all[RecordsReentrantRemoveInEquals] = () => Reentrant(Callback.Equals, Inner.Remove);
        all[RecordsReentrantLookupInEquals] = () => Reentrant(Callback.Equals, Inner.Lookup);
        all[RecordsReentrantDisposeInHash] = () => Reentrant(Callback.GetHashCode, Inner.Dispose);
        all[RecordsReentrantAddInHash] = () => Reentrant(Callback.GetHashCode, Inner.Add);
        all[RecordsReentrantRemoveInHash] = () => Reentrant(Callback.GetHashCode, Inner.Remove);
        all[RecordsReentrantLookupInHash] = () => Reentrant(Callback.GetHashCode, Inner.Lookup);
    }

    private static readonly TimeSpan HangLimit = TimeSpan.FromSeconds(10);

    // ---- User code inside the index

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

    internal const int Keys = 40;

    internal static NativeHashIndex<HostileKey> NewIndex()
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
    internal static void ExpectKeys(string what, NativeHashIndex<HostileKey> index, long added, long removed, long failedKey)
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
