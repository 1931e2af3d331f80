using jemalloc.Tests.Support;

namespace jemalloc.Tests.Records;

/// <summary>
/// Record structures made with a <see cref="JemArena"/>'s options: an open read scope holds the
/// arena's reset and dispose back, and after a reset every member that answers about the structure's
/// contents throws <see cref="ObjectDisposedException"/> instead of the values from before.
/// </summary>
[Collection(LeakChecked.Name)]
public sealed class RecordArenaResetTests : LeakCheckedTest
{
    [Fact]
    public void An_open_read_scope_refuses_the_arena_s_reset_and_dispose_until_it_is_closed()
    {
        using var arena = new JemArena();
        using var store = new Utf8StringStore(Utf8StringStore.MinBlockSize, arena.Options);
        StoredUtf8String value = store.Add("kept while the scope is open");
        StringStoreReadScope scope = store.EnterRead();
        try
        {
            InvalidOperationException reset = Assert.Throws<InvalidOperationException>(arena.Reset);
            Assert.Contains("read scope", reset.Message, StringComparison.Ordinal);
            Assert.Contains("Utf8StringStore", reset.Message, StringComparison.Ordinal);
            _ = Assert.Throws<InvalidOperationException>(arena.Dispose);
            Assert.False(arena.IsDisposed);

            // A writer beside the reader may add blocks: they are held as well.
            StoredUtf8String later = store.Add(new string('x', Utf8StringStore.MinBlockSize * 2));
            _ = Assert.Throws<InvalidOperationException>(arena.Reset);
            Assert.Equal("kept while the scope is open", value.ToString());
            Assert.Equal(Utf8StringStore.MinBlockSize * 2, later.Length);
        }
        finally
        {
            scope.Dispose();
        }

        arena.Reset();
        _ = Assert.Throws<ObjectDisposedException>(() => value.ToString());
        _ = Assert.Throws<ObjectDisposedException>(() => store.EnterRead());
    }

    [Fact]
    public void Scopes_opened_on_many_threads_each_hold_the_reset_until_the_last_is_closed()
    {
        using var arena = new JemArena();
        using var store = new Utf8StringStore(Utf8StringStore.MinBlockSize, arena.Options);
        StoredUtf8String value = store.Add("shared");
        StringStoreReadScope[] scopes = Enumerable.Range(0, 4).Select(_ => OnOtherThread(store.EnterRead)).ToArray();
        StringStoreReadScope nested = store.EnterRead();
        foreach (StringStoreReadScope scope in scopes)
        {
            _ = Assert.Throws<InvalidOperationException>(arena.Reset);
            scope.Dispose();
        }

        _ = Assert.Throws<InvalidOperationException>(arena.Reset);
        Assert.Equal("shared", value.ToString());
        nested.Dispose();
        arena.Reset();
        _ = Assert.Throws<ObjectDisposedException>(() => value.ToString());
    }

    [Fact]
    public void A_store_in_the_default_arena_keeps_no_allocation_for_its_scopes()
    {
        long before = AllocationLedger.LiveCount;
        using var store = new Utf8StringStore(Utf8StringStore.MinBlockSize, AllocationOptions.Default);
        using (store.EnterRead())
        {
            Assert.Equal(before, AllocationLedger.LiveCount);
        }
    }

    public static TheoryData<string> StoreMembers =>
    [
        nameof(Utf8StringStore.Count),
        nameof(Utf8StringStore.UsedBytes),
        nameof(Utf8StringStore.AbandonedBytes),
        nameof(Utf8StringStore.ReservedBytes),
        nameof(Utf8StringStore.BlockCount),
        "Add(string) of a string that gets a block of its own",
        "Add(ReadOnlySpan<byte>)",
        nameof(Utf8StringStore.Replace),
        nameof(Utf8StringStore.Reset),
        nameof(Utf8StringStore.EnterRead),
    ];

    [Theory]
    [MemberData(nameof(StoreMembers))]
    public void After_the_arena_s_reset_a_store_member_throws_ObjectDisposedException(string member)
    {
        using var arena = new JemArena();
        using var store = new Utf8StringStore(Utf8StringStore.MinBlockSize, arena.Options);
        StoredUtf8String old = store.Add("before the reset");
        _ = store.Replace(old, "replaced");
        arena.Reset();
        _ = Assert.Throws<ObjectDisposedException>(StoreMember(store, old, member));
    }

    [Fact]
    public void After_the_arena_s_reset_an_empty_store_s_Add_throws_ObjectDisposedException()
    {
        using var arena = new JemArena();
        using var store = new Utf8StringStore(Utf8StringStore.MinBlockSize, arena.Options);
        arena.Reset();
        _ = Assert.Throws<ObjectDisposedException>(() => store.Add("after"));
        Assert.Equal(0, arena.UsedBytes);
    }

    [Theory]
    [InlineData(nameof(Utf8StringStore.AbandonedBytes))]
    [InlineData(nameof(Utf8StringStore.ReservedBytes))]
    [InlineData(nameof(Utf8StringStore.BlockCount))]
    public void After_Dispose_a_store_s_counters_throw_ObjectDisposedException(string member)
    {
        var store = new Utf8StringStore(Utf8StringStore.MinBlockSize, AllocationOptions.Default);
        StoredUtf8String old = store.Add("before the dispose");
        store.Dispose();
        _ = Assert.Throws<ObjectDisposedException>(StoreMember(store, old, member));
    }

    [Fact]
    public void A_store_whose_arena_was_reset_can_still_be_disposed_and_frees_nothing_twice()
    {
        using var arena = new JemArena();
        var store = new Utf8StringStore(Utf8StringStore.MinBlockSize, arena.Options);
        _ = store.Add("gone with the arena");
        arena.Reset();
        store.Dispose();
        Assert.True(store.IsDisposed);
        Assert.Equal(0, arena.UsedBytes);
    }

    public static TheoryData<string> IndexMembers =>
    [
        nameof(NativeHashIndex<long>.Count),
        nameof(NativeHashIndex<long>.Capacity),
        nameof(NativeHashIndex<long>.TableBytes),
        "TryGetValues of no keys",
    ];

    [Theory]
    [MemberData(nameof(IndexMembers))]
    public void After_the_arena_s_reset_an_index_member_throws_ObjectDisposedException(string member)
    {
        using var arena = new JemArena();
        using var index = new NativeHashIndex<long>(100, arena.Options);
        index.Add(1, 10);
        arena.Reset();
        _ = Assert.Throws<ObjectDisposedException>(IndexMember(index, member));
    }

    [Fact]
    public void After_the_arena_s_reset_Clear_throws_ObjectDisposedException_naming_the_index()
    {
        using var arena = new JemArena();
        using var index = new NativeHashIndex<long>(100, arena.Options);
        index.Add(1, 10);
        arena.Reset();
        ObjectDisposedException e = Assert.Throws<ObjectDisposedException>(index.Clear);
        Assert.Equal("NativeHashIndex", e.ObjectName);
        // The index was not disposed: the reset freed its table, and the message says that.
        Assert.StartsWith("This NativeHashIndex has been freed", e.Message, StringComparison.Ordinal);
        Assert.Contains("arena reset", e.Message, StringComparison.Ordinal);
    }

    [Theory]
    [MemberData(nameof(IndexMembers))]
    public void An_index_member_still_answers_while_the_index_grows_on_another_thread(string member)
    {
        // The members above tell a reset from a growth that freed the old table meanwhile. The writer
        // waits for the reader's first read, and after each growth for one more, so the two meet
        // even when the scheduler (qemu, a loaded machine) would run them one after the other.
        using var index = new NativeHashIndex<long>(0, AllocationOptions.Default);
        bool stop = false;
        long reads = 0;
        Exception? failure = null;
        var reader = new Thread(() =>
        {
            try
            {
                Action read = IndexMember(index, member);
                while (!Volatile.Read(ref stop))
                {
                    read();
                    Interlocked.Increment(ref reads);
                }
            }
            catch (Exception e)
            {
                failure = e;
            }
        });
        reader.Start();
        Assert.True(ReadsPassed(0), $"the reader started (failure: {failure})");
        int growthsMet = 0;
        long tableBytes = index.TableBytes;
        for (long key = 0; key < 20_000 && reader.IsAlive; key++)
        {
            index.Add(key, key);
            if (index.TableBytes != tableBytes)
            {
                tableBytes = index.TableBytes;
                if (ReadsPassed(Interlocked.Read(ref reads)))
                {
                    growthsMet++;
                }
            }
        }

        Volatile.Write(ref stop, true);
        Assert.True(reader.Join(TimeSpan.FromSeconds(30)), "the reader finished");
        Assert.Null(failure);
        Assert.True(growthsMet > 0, "the reader read between growths");
        Assert.Equal(20_000, index.Count);

        bool ReadsPassed(long seen) =>
            SpinWait.SpinUntil(() => Interlocked.Read(ref reads) > seen || failure is not null, TimeSpan.FromSeconds(10))
            && failure is null;
    }

    private static T OnOtherThread<T>(Func<T> action)
    {
        T result = default!;
        Exception? failure = null;
        var thread = new Thread(() =>
        {
            try
            {
                result = action();
            }
            catch (Exception e)
            {
                failure = e;
            }
        });
        thread.Start();
        Assert.True(thread.Join(TimeSpan.FromSeconds(30)), "the other thread finished");
        Assert.Null(failure);
        return result;
    }

    private static Action StoreMember(Utf8StringStore store, StoredUtf8String old, string member) => member switch
    {
        nameof(Utf8StringStore.Count) => () => _ = store.Count,
        nameof(Utf8StringStore.UsedBytes) => () => _ = store.UsedBytes,
        nameof(Utf8StringStore.AbandonedBytes) => () => _ = store.AbandonedBytes,
        nameof(Utf8StringStore.ReservedBytes) => () => _ = store.ReservedBytes,
        nameof(Utf8StringStore.BlockCount) => () => _ = store.BlockCount,
        "Add(string) of a string that gets a block of its own" => () => store.Add(new string('y', Utf8StringStore.MinBlockSize * 2)),
        "Add(ReadOnlySpan<byte>)" => () => store.Add("bytes"u8),
        nameof(Utf8StringStore.Replace) => () => store.Replace(old, "again"),
        nameof(Utf8StringStore.Reset) => store.Reset,
        nameof(Utf8StringStore.EnterRead) => () => store.EnterRead().Dispose(),
        _ => throw new ArgumentOutOfRangeException(nameof(member), member, "no such member"),
    };

    private static Action IndexMember(NativeHashIndex<long> index, string member) => member switch
    {
        nameof(NativeHashIndex<long>.Count) => () => _ = index.Count,
        nameof(NativeHashIndex<long>.Capacity) => () => _ = index.Capacity,
        nameof(NativeHashIndex<long>.TableBytes) => () => _ = index.TableBytes,
        "TryGetValues of no keys" => () => _ = index.TryGetValues([], []),
        _ => throw new ArgumentOutOfRangeException(nameof(member), member, "no such member"),
    };
}
