using jemalloc.Internal;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.Records;

[Collection(LeakChecked.Name)]
public sealed class NativeHashIndexTests : LeakCheckedTest
{
    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(3)]
    public void Matches_a_dictionary_over_random_operations(int seed)
    {
        var random = new Random(seed);
        var expected = new Dictionary<long, long>();
        using var index = new NativeHashIndex<long>();
        // A small key range so adds, replacements and removals of present keys all happen often,
        // and enough operations that the table grows several times and shifts long probe runs.
        long keyRange = 5000;
        for (int op = 0; op < 200_000; op++)
        {
            long key = random.NextInt64(-keyRange, keyRange) * 7919;
            long value = random.NextInt64(0, long.MaxValue - 1);
            switch (random.Next(5))
            {
                case 0:
                    Assert.Equal(!expected.ContainsKey(key), index.Set(key, value));
                    expected[key] = value;
                    break;
                case 1:
                    if (expected.TryAdd(key, value))
                    {
                        index.Add(key, value);
                    }
                    else
                    {
                        Assert.Throws<ArgumentException>(() => index.Add(key, value));
                    }

                    break;
                case 2:
                    Assert.Equal(expected.Remove(key), index.Remove(key));
                    break;
                default:
                    Assert.Equal(expected.TryGetValue(key, out long want), index.TryGetValue(key, out long got));
                    Assert.Equal(want, got);
                    break;
            }

            Assert.Equal(expected.Count, index.Count);
        }

        foreach ((long key, long value) in expected)
        {
            Assert.Equal(value, index[key]);
        }

        Assert.True(index.Capacity >= expected.Count * 4 / 3);
    }

    [Theory]
    [InlineData(1000, 1336)]
    [InlineData(999, 1332)]
    [InlineData(13, 20)]
    [InlineData(12, 16)]
    [InlineData(0, 16)]
    public void A_sized_index_takes_just_the_slots_for_three_quarters_full_and_holds_them_without_growing(long expected, long capacity)
    {
        using var index = new NativeHashIndex<long>(expected, AllocationOptions.Default);
        Assert.Equal(capacity, index.Capacity);
        for (long k = 0; k < expected; k++)
        {
            index.Add(k * 31, k);
        }

        Assert.Equal(capacity, index.Capacity);
        // It grows only past three quarters full (which rounding may put a few keys past the count asked for).
        for (long k = expected; k < capacity / 4 * 3; k++)
        {
            index.Add(k * 31, k);
        }

        Assert.Equal(capacity, index.Capacity);
        index.Add(-1, 0);
        Assert.Equal(capacity * 2, index.Capacity);
        for (long k = 0; k < capacity / 4 * 3; k++)
        {
            Assert.Equal(k, index[k * 31]);
        }
    }

    [Fact]
    public void Colliding_keys_in_a_table_that_is_not_a_power_of_two_wrap_around_and_survive_removals()
    {
        using var index = new NativeHashIndex<CollidingKey>(15, AllocationOptions.Default);
        Assert.Equal(20, index.Capacity);
        var present = new HashSet<int>();
        for (int round = 0; round < 200; round++)
        {
            int k = (round * 7) % 15;
            if (present.Contains(k))
            {
                Assert.True(index.Remove(new CollidingKey(k)));
                _ = present.Remove(k);
            }
            else
            {
                index.Add(new CollidingKey(k), k);
                _ = present.Add(k);
            }

            Assert.Equal(20, index.Capacity);
            for (int j = 0; j < 15; j++)
            {
                Assert.Equal(present.Contains(j), index.TryGetValue(new CollidingKey(j), out long value));
                Assert.Equal(present.Contains(j) ? j : 0, value);
            }
        }
    }

    [Fact]
    public void Grows_from_the_smallest_table_and_keeps_every_key()
    {
        using var index = new NativeHashIndex<int>();
        Assert.Equal(NativeHashIndex<int>.MinCapacity, index.Capacity);
        for (int i = 0; i < 100_000; i++)
        {
            index.Add(i, i * 2L);
        }

        Assert.Equal(131_072 * 2, index.Capacity);
        for (int i = 0; i < 100_000; i++)
        {
            Assert.Equal(i * 2L, index[i]);
        }

        Assert.False(index.ContainsKey(100_000));
    }

    [Fact]
    public void A_presized_index_does_not_grow_and_is_one_ledger_entry()
    {
        long before = AllocationLedger.LiveCount;
        using var index = new NativeHashIndex<long>(1000, AllocationOptions.Default);
        long capacity = index.Capacity;
        for (long i = 0; i < 1000; i++)
        {
            index.Add(i, i);
        }

        Assert.Equal(capacity, index.Capacity);
        Assert.Equal(1, AllocationLedger.LiveCount - before);
        Assert.Equal(capacity * 16, index.TableBytes);
    }

    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    public void Keys_that_share_hash_codes_match_a_dictionary_through_growth_and_backward_shifts(int seed)
    {
        // Five hash codes for all keys: long probe runs that wrap past the table's end, and removals
        // that shift keys of several homes back through the wrap.
        var random = new Random(seed);
        var expected = new Dictionary<CollidingKey, long>();
        using var index = new NativeHashIndex<CollidingKey>();
        for (int op = 0; op < 20_000; op++)
        {
            var key = new CollidingKey(random.Next(300));
            long value = random.Next(3) == 0 ? long.MaxValue : random.NextInt64(0, 1000);
            if (random.Next(3) == 0)
            {
                Assert.Equal(expected.Remove(key), index.Remove(key));
            }
            else
            {
                Assert.Equal(!expected.ContainsKey(key), index.Set(key, value));
                expected[key] = value;
            }

            Assert.Equal(expected.Count, index.Count);
            if (op % 100 == 0)
            {
                for (int id = 0; id < 300; id++)
                {
                    var probe = new CollidingKey(id);
                    Assert.Equal(expected.TryGetValue(probe, out long want), index.TryGetValue(probe, out long got));
                    Assert.Equal(want, got);
                }
            }
        }
    }

    [Fact]
    public void The_largest_value_round_trips_and_negative_values_are_refused()
    {
        using var index = new NativeHashIndex<int>();
        index.Add(1, long.MaxValue);
        Assert.Equal(long.MaxValue, index[1]);
        Assert.Throws<ArgumentOutOfRangeException>(() => index.Add(2, -1));
        Assert.Throws<ArgumentOutOfRangeException>(() => index.Set(1, long.MinValue));
        Assert.Throws<ArgumentOutOfRangeException>(() => index[1] = -1);
        Assert.Equal(long.MaxValue, index[1]);
        Assert.Equal(1, index.Count);
        Assert.Throws<KeyNotFoundException>(() => index[2]);
    }

    [Fact]
    public void Works_with_a_struct_key()
    {
        using var index = new NativeHashIndex<Guid>();
        Guid[] keys = [.. Enumerable.Range(0, 500).Select(_ => Guid.NewGuid())];
        for (int i = 0; i < keys.Length; i++)
        {
            index.Add(keys[i], i);
        }

        for (int i = 0; i < keys.Length; i += 2)
        {
            Assert.True(index.Remove(keys[i]));
        }

        for (int i = 0; i < keys.Length; i++)
        {
            Assert.Equal(i % 2 == 1, index.TryGetValue(keys[i], out long row));
            Assert.Equal(i % 2 == 1 ? i : 0, row);
        }
    }

    [Fact]
    public void Clear_removes_every_key()
    {
        using var index = new NativeHashIndex<long>();
        for (long i = 0; i < 100; i++)
        {
            index.Add(i, 0);
        }

        index.Clear();
        Assert.Equal(0, index.Count);
        Assert.False(index.ContainsKey(5));
        index.Add(5, 1);
        Assert.Equal(1, index[5]);
    }

    [Fact]
    public void Misuse_throws_conventional_exceptions()
    {
        using var index = new NativeHashIndex<long>();
        index.Add(1, 10);
        Assert.Throws<KeyNotFoundException>(() => index[2]);
        ArgumentException duplicate = Assert.Throws<ArgumentException>(() => index.Add(1, 11));
        Assert.Equal("key", duplicate.ParamName);
        Assert.Equal(10, index[1]);
        Assert.Throws<ArgumentOutOfRangeException>(() => index.Add(3, -1));
        Assert.Throws<ArgumentOutOfRangeException>(() => index[3] = -5);
        Assert.False(index.ContainsKey(3));
        Assert.Throws<ArgumentOutOfRangeException>(() => new NativeHashIndex<long>(-1, AllocationOptions.Default));
    }

    [Fact]
    public void A_disposed_index_throws_and_frees_its_table()
    {
        long before = AllocationLedger.LiveCount;
        var index = new NativeHashIndex<long>();
        index.Add(1, 1);
        index.Dispose();
        index.Dispose();
        Assert.Equal(before, AllocationLedger.LiveCount);
        Assert.True(index.IsDisposed);
        DisposedMessages.AssertDisposed("NativeHashIndex", () => index.TryGetValue(1, out _));
        DisposedMessages.AssertDisposed("NativeHashIndex", () => index[1]);
        DisposedMessages.AssertDisposed("NativeHashIndex", () => index.Add(2, 2));
        DisposedMessages.AssertDisposed("NativeHashIndex", () => index.Remove(1));
        DisposedMessages.AssertDisposed("NativeHashIndex", index.Clear);
        DisposedMessages.AssertDisposed("NativeHashIndex", () => index.Capacity);
        DisposedMessages.AssertDisposed("NativeHashIndex", () => index.Count);
    }

    [Fact]
    public void A_batch_lookup_finds_each_key_and_marks_the_missing_ones()
    {
        using var index = new NativeHashIndex<long>();
        for (long k = 0; k < 1000; k++)
        {
            index.Add(k * 7, k);
        }

        long[] keys = [.. Enumerable.Range(0, 100).Select(i => (long)i * 3)];
        var values = new long[keys.Length + 5];
        values.AsSpan().Fill(99);
        int found = index.TryGetValues(keys, values);
        Assert.Equal(keys.Count(k => k % 7 == 0), found);
        for (int i = 0; i < keys.Length; i++)
        {
            Assert.Equal(keys[i] % 7 == 0 ? keys[i] / 7 : -1, values[i]);
        }

        Assert.Equal(99, values[^1]);
        Assert.Equal(0, index.TryGetValues([], []));
        ArgumentException e = Assert.Throws<ArgumentException>(() => index.TryGetValues(keys, new long[keys.Length - 1]));
        Assert.Equal("values", e.ParamName);
    }

    [Fact]
    public void A_batch_lookup_whose_values_overlap_its_keys_is_refused_before_anything_is_written()
    {
        using var index = new NativeHashIndex<long>();
        index.Add(1, 10);
        index.Add(2, 20);
        long[] both = [1, 2, 3, 4];
        foreach ((int keyStart, int valueStart) in new[] { (0, 0), (0, 1), (1, 0), (1, 2) })
        {
            ArgumentException e = Assert.Throws<ArgumentException>(() => index.TryGetValues(both.AsSpan(keyStart, 2), both.AsSpan(valueStart, 2)));
            Assert.Equal("values", e.ParamName);
            Assert.Contains("overlaps the keys", e.Message, StringComparison.Ordinal);
            Assert.Equal([1, 2, 3, 4], both);
        }

        // Neighbours that do not overlap are fine.
        Assert.Equal(2, index.TryGetValues(both.AsSpan(0, 2), both.AsSpan(2, 2)));
        Assert.Equal([1, 2, 10, 20], both);
    }

    [Fact]
    public void A_batch_lookup_of_colliding_keys_probes_like_a_single_one()
    {
        using var index = new NativeHashIndex<CollidingKey>();
        for (int k = 0; k < 40; k++)
        {
            index.Add(new CollidingKey(k), k);
        }

        _ = index.Remove(new CollidingKey(3));
        CollidingKey[] keys = [.. Enumerable.Range(0, 45).Select(k => new CollidingKey(k))];
        var values = new long[keys.Length];
        Assert.Equal(39, index.TryGetValues(keys, values));
        for (int k = 0; k < keys.Length; k++)
        {
            Assert.Equal(k is 3 or >= 40 ? -1 : k, values[k]);
        }
    }

    [Fact]
    public void A_batch_lookup_on_a_disposed_index_throws()
    {
        var index = new NativeHashIndex<long>();
        index.Add(1, 1);
        index.Dispose();
        Assert.Throws<ObjectDisposedException>(() => index.TryGetValues([1L], new long[1]));
    }

    [Fact]
    public void Batch_lookups_on_reader_threads_see_whole_writes_while_the_writer_grows_the_index()
    {
        using var index = new NativeHashIndex<long>();
        long published = 0;
        long[] batchesBeforeWrites = new long[2];
        long[] batchesDuringWrites = new long[2];
        Workers.RunAlongside(2, (reader, stop) =>
        {
            var keys = new long[32];
            var values = new long[32];
            long batches = 0;
            while (!stop.IsCancellationRequested || batches == 0)
            {
                long seen = Volatile.Read(ref published);
                for (int i = 0; i < keys.Length; i++)
                {
                    keys[i] = seen == 0 ? 0 : (i * 7919L) % seen;
                }

                int found = index.TryGetValues(keys, values);
                for (int i = 0; i < keys.Length; i++)
                {
                    // A key published before the batch started is always there, with its value.
                    if (seen > 0 && values[i] != keys[i] * 2)
                    {
                        throw new InvalidOperationException($"key {keys[i]} read {values[i]} (found {found}).");
                    }
                }

                batches++;
                if (seen > 0)
                {
                    Interlocked.Increment(ref batchesDuringWrites[reader]);
                }
                else
                {
                    Interlocked.Increment(ref batchesBeforeWrites[reader]);
                }
            }
        },
        () =>
        {
            // The readers are running before the writer starts, so the two sides meet.
            Assert.True(SpinWait.SpinUntil(() => Interlocked.Read(ref batchesBeforeWrites[0]) > 0 && Interlocked.Read(ref batchesBeforeWrites[1]) > 0, Workers.DefaultTimeout), "the readers did not start");
            for (long k = 0; k < 200_000; k++)
            {
                index.Add(k, k * 2);
                Volatile.Write(ref published, k + 1);
                if (k == 100_000)
                {
                    // Half-way, until both readers have looked up written keys: the sides meet however the threads are scheduled.
                    Assert.True(SpinWait.SpinUntil(() => Interlocked.Read(ref batchesDuringWrites[0]) > 0 && Interlocked.Read(ref batchesDuringWrites[1]) > 0, Workers.DefaultTimeout), "the readers never met the writer");
                }
            }
        });

        Assert.True(index.Capacity >= 200_000);
        // Both sides ran and met: each reader looked up published keys while the writer still wrote.
        Assert.All(batchesDuringWrites, batches => Assert.True(batches > 0, "a reader made no batch lookup while the writer wrote"));
    }

    [Fact]
    public void A_second_writer_is_refused_while_one_writes()
    {
        using var index = new NativeHashIndex<long>();
        // Another writer is in: the guard is held, as while a write runs on another thread.
        var field = typeof(NativeHashIndex<long>).GetField("_writer", System.Reflection.BindingFlags.NonPublic | System.Reflection.BindingFlags.Instance)!;
        var held = default(SingleWriterGuard);
        held.Enter(index, "test");
        field.SetValue(index, held);
        try
        {
            InvalidOperationException e = Assert.Throws<InvalidOperationException>(() => index.Add(1, 1));
            Assert.Contains("one writer", e.Message, StringComparison.Ordinal);
            Assert.Throws<InvalidOperationException>(() => index.Remove(1));
            Assert.Throws<InvalidOperationException>(index.Dispose);
        }
        finally
        {
            field.SetValue(index, default(SingleWriterGuard));
        }

        index.Add(1, 1);
        Assert.Equal(1, index[1]);
    }

    [Fact]
    public void Readers_see_every_stable_key_while_one_writer_adds_removes_and_grows()
    {
        using var index = new NativeHashIndex<long>();
        // Keys 0..999 stay with value key*3; the writer churns keys from 1,000,000 up, growing the table.
        for (long i = 0; i < 1000; i++)
        {
            index.Add(i, i * 3);
        }

        long[] reads = new long[2];
        long[] readsDuringWrites = new long[2];
        int writing = 0;
        Workers.RunAlongside(2, (reader, stop) =>
        {
            var random = new Random(reader);
            while (!stop.IsCancellationRequested || reads[reader] == 0)
            {
                long key = random.Next(1000);
                Assert.True(index.TryGetValue(key, out long value), $"key {key} vanished");
                Assert.Equal(key * 3, value);
                Interlocked.Increment(ref reads[reader]);
                if (Volatile.Read(ref writing) == 1 && !stop.IsCancellationRequested)
                {
                    Interlocked.Increment(ref readsDuringWrites[reader]);
                }
            }
        },
        () =>
        {
            // The readers are running before the writer starts, so the two sides meet.
            Assert.True(SpinWait.SpinUntil(() => Interlocked.Read(ref reads[0]) > 0 && Interlocked.Read(ref reads[1]) > 0, Workers.DefaultTimeout), "the readers did not start");
            Volatile.Write(ref writing, 1);
            for (long i = 0; i < 200_000; i++)
            {
                index.Add(1_000_000 + i, i);
                if (i % 2 == 1)
                {
                    Assert.True(index.Remove(1_000_000 + i - 1));
                }

                if (i == 100_000)
                {
                    // Half-way, until both readers have read during the writes: the sides meet however the threads are scheduled.
                    Assert.True(SpinWait.SpinUntil(() => Interlocked.Read(ref readsDuringWrites[0]) > 0 && Interlocked.Read(ref readsDuringWrites[1]) > 0, Workers.DefaultTimeout), "the readers never met the writer");
                }
            }
        });

        // Both sides ran and met: each reader read while the writer still wrote.
        Assert.All(readsDuringWrites, r => Assert.True(r > 0, "a reader made no lookup while the writer wrote"));
        Assert.Equal(1000 + 100_000, index.Count);
        for (long i = 0; i < 1000; i++)
        {
            Assert.Equal(i * 3, index[i]);
        }
    }

    [Theory]
    [InlineData(0)]
    [InlineData(1)]
    [InlineData(1_000)]
    [InlineData(5_000)]
    public void AddRange_holds_what_Add_would_growing_from_the_smallest_table(int count)
    {
        using var index = new NativeHashIndex<long>();
        long[] keys = [.. Enumerable.Range(0, count).Select(i => 1_000 + (3L * i))];
        long[] values = [.. Enumerable.Range(0, count).Select(i => (long)i)];
        index.AddRange(keys, values);
        index.AddRange(keys.AsSpan(0, 0), values.AsSpan(0, 0));
        Assert.Equal(count, index.Count);
        long[] found = new long[count];
        Assert.Equal(count, index.TryGetValues(keys, found));
        Assert.Equal(values, found);
        Assert.False(index.ContainsKey(999));
        Assert.True(index.Capacity / 4 * 3 >= count);
    }

    [Fact]
    public void AddRange_of_colliding_user_keys_matches_a_dictionary()
    {
        using var index = new NativeHashIndex<CollidingKey>();
        CollidingKey[] keys = [.. Enumerable.Range(0, 300).Select(i => new CollidingKey(i * 7))];
        index.AddRange(keys, [.. Enumerable.Range(0, 300).Select(i => (long)i)]);
        for (int i = 0; i < keys.Length; i++)
        {
            Assert.Equal(i, index[keys[i]]);
        }

        Assert.True(index.Remove(keys[10]));
        Assert.False(index.ContainsKey(keys[10]));
        Assert.Equal(299, index.Count);
    }

    [Fact]
    public void AddRange_stops_at_a_duplicate_or_negative_value_keeping_the_keys_before()
    {
        using var index = new NativeHashIndex<long>();
        index.Add(5, 50);
        ArgumentException duplicate = Assert.Throws<ArgumentException>(() => index.AddRange([1, 2, 5, 3], [10, 20, 30, 40]));
        Assert.Equal("keys", duplicate.ParamName);
        Assert.Equal(3, index.Count);
        Assert.Equal(20, index[2]);
        Assert.Equal(50, index[5]);
        Assert.False(index.ContainsKey(3));

        Assert.Throws<ArgumentException>(() => index.AddRange([7, 8, 7], [1, 2, 3]));
        Assert.Equal(5, index.Count);
        Assert.Throws<ArgumentOutOfRangeException>(() => index.AddRange([9, 10], [1, -1]));
        Assert.Equal(6, index.Count);
        Assert.False(index.ContainsKey(10));
        Assert.Throws<ArgumentException>(() => index.AddRange([11, 12], [1]));
        index.Dispose();
        Assert.Throws<ObjectDisposedException>(() => index.AddRange([13], [1]));
    }

    [Fact]
    public void AddRange_is_seen_whole_chunk_by_chunk_by_concurrent_readers()
    {
        using var index = new NativeHashIndex<long>();
        const int Count = 200_000;
        long[] keys = [.. Enumerable.Range(0, Count).Select(i => (long)i)];
        long[] values = [.. Enumerable.Range(0, Count).Select(i => (long)i * 2)];
        using var done = new ManualResetEventSlim();
        long wrong = 0;
        long reads = 0;
        var reader = new Thread(() =>
        {
            var random = new Random(3);
            while (!done.IsSet)
            {
                long key = random.Next(Count);
                if (index.TryGetValue(key, out long value) && value != key * 2)
                {
                    Interlocked.Increment(ref wrong);
                }

                reads++;
            }
        });
        reader.Start();
        index.AddRange(keys, values);
        done.Set();
        reader.Join();
        Assert.Equal(0, Interlocked.Read(ref wrong));
        Assert.Equal(Count, index.Count);
        Assert.True(reads > 0);
    }
}
