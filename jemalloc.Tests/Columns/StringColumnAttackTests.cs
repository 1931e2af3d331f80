#pragma warning disable xUnit1031 // the races block on their threads on purpose
using System.Text;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.Columns;

/// <summary>Hostile use of NativeStringColumn, its scope, its builder and NativeBufferWriter(long, AllocationOptions).</summary>
[Collection(LeakChecked.Name)]
public sealed class StringColumnAttackTests : LeakCheckedTest
{
    // Threads of their own (not the pool's), so that their jemalloc thread caches go when they end.
    // An exception on the thread is rethrown by Join, instead of ending the test host.
    private static Worker Start(Action body) => new(body);

    private sealed class Worker
    {
        private readonly Thread _thread;
        private Exception? _failure;

        internal Worker(Action body)
        {
            _thread = new Thread(() =>
            {
                try
                {
                    body();
                }
                catch (Exception e)
                {
                    _failure = e;
                }
            });
            _thread.Start();
        }

        internal void Join()
        {
            _thread.Join();
            if (_failure is not null)
            {
                throw new InvalidOperationException("A thread of the test failed: " + _failure, _failure);
            }
        }
    }

    private static NativeStringColumn Build(IEnumerable<string?> values, bool isUtf8 = true)
    {
        using var builder = new NativeStringColumnBuilder(isUtf8);
        foreach (string? value in values)
        {
            builder.Append(value);
        }

        return builder.Build();
    }

    [Fact]
    public void StringColumnAttack_scope_copy_disposed_twice_closes_once_and_the_column_can_then_be_freed()
    {
        NativeStringColumn column = Build(["a", "bc", null]);
        NativeStringColumnReadScope scope = column.OpenRead();
        NativeStringColumnReadScope copy = scope;
        copy.Dispose();
        scope.Dispose();
        copy.Dispose();
        NativeStringColumnReadScope read = default;
        try
        {
            read = scope;
            _ = read[0];
            Assert.Fail("A closed scope read a value.");
        }
        catch (ObjectDisposedException)
        {
        }

        // A second scope, opened after the copies were closed, must still keep the column alive.
        using (NativeStringColumnReadScope second = column.OpenRead())
        {
            scope.Dispose();
            copy.Dispose();
            Assert.Throws<InvalidOperationException>(column.Dispose);
            Assert.Equal("bc", Encoding.UTF8.GetString(second[1]));
        }

        column.Dispose();
        Assert.Throws<ObjectDisposedException>(() => column.GetString(0));
    }

    [Fact]
    public void StringColumnAttack_default_scope_throws_instead_of_reading_null()
    {
        NativeStringColumnReadScope scope = default;
        try
        {
            _ = scope[0];
            Assert.Fail("default scope gave a value");
        }
        catch (Exception e) when (e is ArgumentOutOfRangeException or ObjectDisposedException)
        {
        }

        scope.Dispose();
    }

    [Fact]
    public void StringColumnAttack_arrays_disposed_directly_under_a_scope_are_refused_and_the_scope_still_reads()
    {
        using NativeStringColumn column = Build(["xyz", null, "w"]);
        using (NativeStringColumnReadScope scope = column.OpenRead())
        {
            Assert.Throws<InvalidOperationException>(column.Data.Dispose);
            Assert.Throws<InvalidOperationException>(column.Offsets.Dispose);
            Assert.Throws<InvalidOperationException>(() => column.Validity!.Dispose());
            Assert.Equal("xyz", Encoding.UTF8.GetString(scope[0]));
            Assert.True(scope.IsNull(1));
        }
    }

    [Fact]
    public void StringColumnAttack_arrays_disposed_directly_make_every_member_throw_ObjectDisposed_and_dispose_is_quiet()
    {
        NativeStringColumn column = Build(["xyz", null, "w"]);
        column.Validity!.Dispose();
        Assert.Throws<ObjectDisposedException>(() => column.IsNull(1));
        Assert.Throws<ObjectDisposedException>(() => column.CountStartsWith("x"u8));
        using (var selection = new HugeArray<byte>(1))
        {
            Assert.Throws<ObjectDisposedException>(() => column.SelectStartsWith("x"u8, selection));
        }

        column.Data.Dispose();
        Assert.Throws<ObjectDisposedException>(() => column.GetString(0));
        column.Dispose();
        column.Dispose();
    }

    [Fact]
    public void StringColumnAttack_one_array_owned_by_two_columns_gives_ObjectDisposed_not_a_read_of_freed_memory()
    {
        using var offsets1 = new HugeArray<long>(3);
        using var offsets2 = new HugeArray<long>(3);
        var data = new HugeArray<byte>(4);
        data[0] = (byte)'a';
        offsets1[1] = 1;
        offsets1[2] = 4;
        offsets2[1] = 1;
        offsets2[2] = 4;
        var a = new NativeStringColumn(offsets1, data, null, 2, true);
        var b = new NativeStringColumn(offsets2, data, null, 2, true);
        a.Dispose();
        Assert.Throws<ObjectDisposedException>(() => b.GetString(0));
        Assert.Throws<ObjectDisposedException>(() => b.IndexOf("a"u8));
        b.Dispose();
    }

    [Fact]
    public void StringColumnAttack_validity_exactly_one_byte_for_eight_rows_and_short_by_one_for_nine()
    {
        using var offsets = new HugeArray<long>(10);
        using var data = new HugeArray<byte>(1);
        using var bits = new HugeArray<byte>(1, 0xFF);
        using (var column = new NativeStringColumn(offsets, data, bits, 8, true))
        {
            Assert.Equal(0, column.NullCount);
            Assert.Equal("", column.GetString(7));
        }
    }

    [Fact]
    public void StringColumnAttack_validity_one_byte_short_is_refused()
    {
        using var offsets = new HugeArray<long>(10);
        using var data = new HugeArray<byte>(1);
        using var bits = new HugeArray<byte>(1, 0xFF);
        Assert.Equal("validity", Assert.Throws<ArgumentException>(() => new NativeStringColumn(offsets, data, bits, 9, true)).ParamName);
    }

    [Theory]
    [InlineData(long.MaxValue)]
    [InlineData(long.MaxValue - 1)]
    [InlineData(long.MinValue)]
    public void StringColumnAttack_absurd_lengths_are_refused(long length)
    {
        using var offsets = new HugeArray<long>(3);
        using var data = new HugeArray<byte>(1);
        Assert.Throws<ArgumentOutOfRangeException>(() => new NativeStringColumn(offsets, data, null, length, true));
    }

    [Theory]
    [InlineData(new long[] { 0, long.MaxValue }, 1)]
    [InlineData(new long[] { long.MinValue, 0 }, 1)]
    [InlineData(new long[] { 0, -1 }, 1)]
    [InlineData(new long[] { 5, 2 }, 8)]
    [InlineData(new long[] { 2, long.MinValue }, 8)]
    [InlineData(new long[] { -8, -4 }, 8)]
    public void StringColumnAttack_overflowing_offsets_are_refused(long[] values, int dataBytes)
    {
        using var offsets = new HugeArray<long>(values.Length);
        for (int i = 0; i < values.Length; i++)
        {
            offsets[i] = values[i];
        }

        using var data = new HugeArray<byte>(dataBytes);
        Assert.Equal("offsets", Assert.Throws<ArgumentException>(() => new NativeStringColumn(offsets, data, null, values.Length - 1, true)).ParamName);
    }

    [Fact]
    public void StringColumnAttack_offsets_changed_to_overflowing_values_throw_InvalidData_in_every_reader()
    {
        using NativeStringColumn column = Build(["abc", "de", "f", "ghij"]);
        long[][] forged = [[long.MaxValue, 3], [0, long.MinValue], [long.MinValue + 1, long.MaxValue], [3, 2], [-1, 3]];
        using var selection = new HugeArray<byte>(1);
        foreach (long[] pair in forged)
        {
            column.Offsets[1] = pair[0];
            column.Offsets[2] = pair[1];
            Assert.Throws<InvalidDataException>(() => column.GetString(1));
            Assert.Throws<InvalidDataException>(() => column.GetByteCount(1));
            Assert.Throws<InvalidDataException>(() => column.CountStartsWith("x"u8));
            Assert.Throws<InvalidDataException>(() => column.IndexOf("zz"u8));
            Assert.Throws<InvalidDataException>(() => column.SelectStartsWith("a"u8, selection));
            Assert.Throws<InvalidDataException>(() => column.CompareOrdinal(1, "a"u8));
            Assert.Throws<InvalidDataException>(() => column.Contains(1, "a"u8));
        }

        column.Offsets[1] = 3;
        column.Offsets[2] = 5;
        Assert.Equal("de", column.GetString(1));
    }

    [Fact]
    public void StringColumnAttack_offsets_rewritten_concurrently_with_searches_never_read_outside_the_block()
    {
        using NativeStringColumn column = Build(Enumerable.Range(0, 4096).Select(i => "v" + i));
        long good = column.Offsets[2000];
        using var stop = new CancellationTokenSource();
        var writer = Start(() =>
        {
            long[] bad = [long.MaxValue, -1, long.MinValue, 1L << 40, good];
            int k = 0;
            while (!stop.IsCancellationRequested)
            {
                column.Offsets[2000] = bad[k++ % bad.Length];
            }

            column.Offsets[2000] = good;
        });
        using var selection = new HugeArray<byte>(512);
        var deadline = DateTime.UtcNow.AddSeconds(1.5);
        int refused = 0;
        while (DateTime.UtcNow < deadline)
        {
            try
            {
                column.CountStartsWith("v1"u8);
                column.SelectStartsWith("v2"u8, selection);
                _ = column.GetBytes(1999);
                _ = column.GetBytes(2000);
            }
            catch (InvalidDataException)
            {
                refused++;
            }
        }

        stop.Cancel();
        writer.Join();
        Assert.Equal(1111, column.CountStartsWith("v1"u8)); // v1, v10-19, v100-199, v1000-1999
        Assert.True(refused > 0);
    }

    [Fact]
    public void StringColumnAttack_dispose_racing_reads_on_other_threads_gives_only_documented_exceptions()
    {
        for (int round = 0; round < 30; round++)
        {
            NativeStringColumn column = Build(Enumerable.Range(0, 2000).Select(i => i % 7 == 0 ? null : "row" + i));
            using var start = new Barrier(3);
            var readers = Enumerable.Range(0, 2).Select(n => Start(() =>
            {
                start.SignalAndWait();
                for (int i = 0; i < 200; i++)
                {
                    try
                    {
                        _ = column.CountStartsWith("row1"u8);
                        string? s = column.GetString(1);
                        Assert.Equal("row1", s);
                    }
                    catch (ObjectDisposedException)
                    {
                        return;
                    }
                }
            })).ToArray();
            start.SignalAndWait();
            bool disposed = false;
            while (!disposed)
            {
                try
                {
                    column.Dispose();
                    disposed = true;
                }
                catch (InvalidOperationException)
                {
                    // ObjectDisposedException too: a refused dispose may have freed some arrays.
                    Thread.Yield();
                }
            }

            foreach (Worker t in readers)
            {
                t.Join();
            }
            Assert.Throws<ObjectDisposedException>(() => column.GetString(1));
        }
    }

    [Fact]
    public void StringColumnAttack_selection_bitmap_is_written_only_in_its_rows_bytes()
    {
        using NativeStringColumn column = Build(Enumerable.Range(0, 20).Select(i => i % 3 == 0 ? "ab" : "cd"));
        using var selection = new HugeArray<byte>(4, 0xEE);
        long count = column.SelectStartsWith("ab"u8, selection);
        Assert.Equal(7, count);
        Assert.Equal(0xEE, selection[3]);
        Assert.Equal(0, selection[2] & 0xF0);
    }

    [Fact]
    public void StringColumnAttack_zero_row_column_answers_every_search_without_reading()
    {
        using var offsets = new HugeArray<long>(1);
        using var data = new HugeArray<byte>(1);
        offsets[0] = 1;
        using var column = new NativeStringColumn(offsets, data, null, 0, true);
        Assert.Equal(0, column.ByteCount);
        Assert.Equal(-1, column.IndexOf(""u8));
        Assert.Equal(0, column.CountStartsWith(""u8));
        using var selection = new HugeArray<byte>(1, 0x5A);
        Assert.Equal(0, column.SelectStartsWith(""u8, selection));
        Assert.Equal(0x5A, selection[0]);
        Assert.Throws<ArgumentOutOfRangeException>(() => column.GetString(0));
        Assert.Throws<ArgumentOutOfRangeException>(() => column.IndexOf(""u8, 1));
    }

    [Fact]
    public void StringColumnAttack_builder_used_from_two_threads_either_appends_or_throws_InvalidOperation_and_counts_match()
    {
        using var builder = new NativeStringColumnBuilder();
        long appended = 0;
        var deadline = DateTime.UtcNow.AddSeconds(1);
        var tasks = Enumerable.Range(0, 2).Select(t => Start(() =>
        {
            long mine = 0;
            while (DateTime.UtcNow < deadline)
            {
                try
                {
                    if (mine % 5 == 4)
                    {
                        builder.AppendNull();
                    }
                    else
                    {
                        builder.Append("t" + t + "-" + mine);
                    }

                    mine++;
                }
                catch (InvalidOperationException)
                {
                }
            }

            Interlocked.Add(ref appended, mine);
        })).ToArray();
        foreach (Worker t in tasks)
        {
            t.Join();
        }
        Assert.Equal(appended, builder.Count);
        using NativeStringColumn column = builder.Build();
        Assert.Equal(appended, column.Length);
        for (long row = 0; row < column.Length; row++)
        {
            string? value = column.GetString(row);
            Assert.True(value is null || value.StartsWith('t'), $"row {row}: '{value}'");
        }
    }

    [Fact]
    public void StringColumnAttack_build_racing_append_loses_no_row_and_leaks_nothing()
    {
        using var builder = new NativeStringColumnBuilder(isUtf8: false);
        var columns = new List<NativeStringColumn>();
        long appended = 0;
        var deadline = DateTime.UtcNow.AddSeconds(1);
        var appender = Start(() =>
        {
            while (DateTime.UtcNow < deadline)
            {
                try
                {
                    builder.Append([1, 2, 3]);
                    appended++;
                }
                catch (InvalidOperationException)
                {
                }
            }
        });
        while (DateTime.UtcNow < deadline)
        {
            try
            {
                columns.Add(builder.Build());
            }
            catch (InvalidOperationException)
            {
            }
        }

        appender.Join();
        columns.Add(builder.Build());
        long total = 0;
        foreach (NativeStringColumn column in columns)
        {
            total += column.Length;
            Assert.Equal(column.Length * 3, column.ByteCount);
            if (column.Length > 0)
            {
                Assert.Equal(new byte[] { 1, 2, 3 }, column.GetBytes(column.Length - 1));
            }

            column.Dispose();
        }

        Assert.Equal(appended, total);
    }

    [Fact]
    public void StringColumnAttack_builder_dispose_racing_append_throws_only_documented_exceptions()
    {
        for (int round = 0; round < 50; round++)
        {
            var builder = new NativeStringColumnBuilder();
            using var go = new Barrier(2);
            var appender = Start(() =>
            {
                go.SignalAndWait();
                for (int i = 0; i < 1000; i++)
                {
                    try
                    {
                        builder.Append("x");
                    }
                    catch (ObjectDisposedException)
                    {
                        return;
                    }
                    catch (InvalidOperationException)
                    {
                    }
                }
            });
            go.SignalAndWait();
            while (true)
            {
                try
                {
                    builder.Dispose();
                    break;
                }
                catch (InvalidOperationException)
                {
                }
            }

            appender.Join();
            Assert.Throws<ObjectDisposedException>(() => builder.Build());
        }
    }

    [Fact]
    public void StringColumnAttack_builder_of_empty_values_only_and_a_validity_byte_exactly_full()
    {
        using var builder = new NativeStringColumnBuilder();
        for (int i = 0; i < 8; i++)
        {
            builder.Append(i == 3 ? null : "");
        }

        using NativeStringColumn column = builder.Build();
        Assert.Equal(8, column.Length);
        Assert.Equal(1, column.NullCount);
        Assert.Equal(1, column.Validity!.Length);
        Assert.Equal(0xF7, column.Validity[0]);
        Assert.Equal(0, column.ByteCount);
        Assert.Equal("", column.GetString(7));
        Assert.Null(column.GetString(3));
    }

    [Fact]
    public void StringColumnAttack_builder_in_an_arena_then_reset_makes_the_column_throw_ObjectDisposed()
    {
        using var arena = new JemArena();
        NativeStringColumn column;
        using (var builder = new NativeStringColumnBuilder(true, arena.Options))
        {
            builder.Append("hello");
            builder.AppendNull();
            column = builder.Build();
        }

        using (NativeStringColumnReadScope scope = column.OpenRead())
        {
            Assert.Throws<InvalidOperationException>(arena.Reset);
            Assert.Equal("hello", Encoding.UTF8.GetString(scope[0]));
        }

        arena.Reset();
        Assert.Throws<ObjectDisposedException>(() => column.GetString(0));
        Assert.Throws<ObjectDisposedException>(() => column.IndexOf("hello"u8));
        column.Dispose();
    }

    [Fact]
    public void StringColumnAttack_a_live_builder_in_an_arena_does_not_block_a_reset_forever()
    {
        // The builder's writers hold their blocks once a span went out; an idle, empty builder
        // (which wrote its first offset in the constructor) should not keep the arena from resetting.
        using var arena = new JemArena();
        var builder = new NativeStringColumnBuilder(true, arena.Options);
        try
        {
            arena.Reset();
            // After the reset the builder must refuse or work, never write into freed memory.
            try
            {
                builder.Append("after");
                using NativeStringColumn column = builder.Build();
                Assert.Equal("after", column.GetString(0));
            }
            catch (ObjectDisposedException)
            {
            }
        }
        finally
        {
            try
            {
                builder.Dispose();
            }
            catch (ObjectDisposedException)
            {
            }
        }
    }

    [Fact]
    public void StringColumnAttack_buffer_writer_with_options_refuses_bad_arguments()
    {
        Assert.Throws<ArgumentOutOfRangeException>(() => new NativeBufferWriter<byte>(0, default(AllocationOptions)));
        Assert.Throws<ArgumentOutOfRangeException>(() => new NativeBufferWriter<byte>(-1, default(AllocationOptions)));
        Exception huge = Record.Exception(() => new NativeBufferWriter<long>(long.MaxValue, default(AllocationOptions)));
        Assert.True(huge is OverflowException or OutOfMemoryException, huge?.ToString());
        Exception big = Record.Exception(() => new NativeBufferWriter<byte>(long.MaxValue / 2, default(AllocationOptions)));
        Assert.True(big is OverflowException or OutOfMemoryException, big?.ToString());
        var arena = new JemArena();
        AllocationOptions options = arena.Options;
        arena.Dispose();
        Assert.Throws<ObjectDisposedException>(() => new NativeBufferWriter<byte>(16, options));
        using var budget = new JemArena(budgetBytes: 1 << 20);
        Assert.Throws<ArenaBudgetExceededException>(() => new NativeBufferWriter<byte>(4 << 20, budget.Options));
        Assert.Equal(0, budget.UsedBytes);
    }

    [Fact]
    public void StringColumnAttack_buffer_writer_in_an_arena_refuses_a_reset_under_a_handed_out_span()
    {
        using var arena = new JemArena();
        using var writer = new NativeBufferWriter<byte>(64, arena.Options);
        Span<byte> span = writer.GetSpan(8);
        span[0] = 42;
        writer.Advance(1);
        Assert.Throws<InvalidOperationException>(arena.Reset);
        Assert.Equal(42, writer.WrittenSpan[0]);
        using HugeArray<byte> detached = writer.DetachToHugeArray();
        Assert.Equal(42, detached[0]);
    }

    [Fact]
    public void StringColumnAttack_checked_mode_catches_a_read_through_a_column_freed_by_an_arena_reset()
    {
        using CheckedModeScope mode = CheckedModeScope.On();
        using var arena = new JemArena();
        NativeStringColumn column;
        using (var builder = new NativeStringColumnBuilder(true, arena.Options))
        {
            builder.Append("secret");
            column = builder.Build();
        }

        arena.Reset();
        Assert.Throws<ObjectDisposedException>(() => column.GetString(0));
        Assert.Throws<ObjectDisposedException>(() => column.OpenRead());
        column.Dispose();
    }

    [Fact]
    public void StringColumnAttack_selection_that_is_the_validity_of_the_same_column_is_refused_even_when_built_elsewhere()
    {
        using var offsets = new HugeArray<long>(9);
        using var data = new HugeArray<byte>(1);
        var bits = new HugeArray<byte>(1, 0xFF);
        using var column = new NativeStringColumn(offsets, data, bits, 8, true);
        Assert.Throws<ArgumentException>(() => column.SelectStartsWith(""u8, bits));
        Assert.Equal(0xFF, bits[0]);
    }

    [Fact]
    public void StringColumnAttack_get_string_of_a_binary_column_is_InvalidOperation_and_lone_surrogates_in_searches_are_refused()
    {
        using NativeStringColumn binary = Build(["a"], isUtf8: false);
        Assert.Throws<InvalidOperationException>(() => binary.GetString(0));
        using NativeStringColumn text = Build(["a\uD800"[..1]]);
        Exception? e = Record.Exception(() => text.IndexOf("\uD800"));
        Assert.True(e is null or ArgumentException, e?.ToString());
        Exception? f = Record.Exception(() => text.ValueEquals(0, "\uDC00"));
        Assert.True(f is null or ArgumentException, f?.ToString());
    }

    [Fact]
    public void StringColumnAttack_a_null_row_whose_offsets_span_bytes_counts_and_copies_none()
    {
        // Arrow lets a null slot span bytes; GetByteCount and CopyTo document 0 for a null row.
        using var offsets = new HugeArray<long>(3);
        using var data = new HugeArray<byte>(6);
        using var bits = new HugeArray<byte>(1, 0x01);
        data.CopyFrom("abcdef"u8, 0);
        offsets[1] = 3;
        offsets[2] = 6;
        using var column = new NativeStringColumn(offsets, data, bits, 2, true);
        Assert.True(column.IsNull(1));
        Assert.Null(column.GetString(1));
        Assert.Null(column.GetBytes(1));
        Assert.False(column.StartsWith(1, "d"u8));
        Assert.Equal(0, column.GetByteCount(1));
        Span<byte> destination = stackalloc byte[8];
        destination.Clear();
        Assert.Equal(0, column.CopyTo(1, destination));
        Assert.Equal(0, destination[0]);
    }

    [Fact]
    public void StringColumnAttack_a_builder_past_its_arenas_budget_refuses_the_row_and_keeps_the_ones_before()
    {
        using var arena = new JemArena(budgetBytes: 256 * 1024);
        long appended = 0;
        using (var builder = new NativeStringColumnBuilder(false, arena.Options))
        {
            byte[] value = new byte[1000];
            Exception? refused = null;
            for (int i = 0; i < 10_000 && refused is null; i++)
            {
                value[0] = (byte)i;
                refused = Record.Exception(() => builder.Append(value));
                if (refused is null)
                {
                    appended++;
                }
            }

            Assert.True(refused is ArenaBudgetExceededException or OutOfMemoryException, refused?.ToString() ?? "no refusal");
            Assert.Equal(appended, builder.Count);
            Assert.Equal(appended * 1000, builder.ByteCount);
            builder.AppendNull();
            Exception? built = Record.Exception(() =>
            {
                using NativeStringColumn column = builder.Build();
                Assert.Equal(appended + 1, column.Length);
                Assert.Equal((byte)(appended - 1), column.GetBytes(appended - 1)![0]);
                Assert.True(column.IsNull(appended));
            });
            Assert.True(built is null or ArenaBudgetExceededException or OutOfMemoryException, built?.ToString());
        }

        Assert.Equal(0, arena.UsedBytes);
    }

    [Fact]
    public void StringColumnAttack_a_builder_at_its_arenas_budget_builds_what_fits_stays_usable_and_leaks_nothing()
    {
        int refusedAppends = 0;
        for (int kib = 26; kib <= 56; kib += 3)
        {
            using var arena = new JemArena(budgetBytes: kib * 1024);
            var builder = new NativeStringColumnBuilder(false, arena.Options);
            long appended = 0;
            try
            {
                for (int i = 0; i < 64; i++)
                {
                    builder.Append(new byte[1000]);
                    appended++;
                }
            }
            catch (ArenaBudgetExceededException)
            {
                refusedAppends++;
            }

            Assert.Equal(appended, builder.Count);
            // Building needs no new block (the next column's are allocated at its first append), so it succeeds.
            using (NativeStringColumn column = builder.Build())
            {
                Assert.Equal(appended, column.Length);
                Assert.Equal(appended * 1000, column.ByteCount);
            }

            Assert.Equal(0, builder.Count);
            Exception? after = Record.Exception(() => builder.AppendNull());
            Assert.True(after is null or ArenaBudgetExceededException, $"AppendNull after the build threw {after}");
            builder.Dispose();
            Assert.Equal(0, arena.UsedBytes);
        }

        Assert.True(refusedAppends > 0, "no budget refused an append: the scenario did not reach the budget");
    }

    [Fact]
    public void StringColumnAttack_a_closed_scope_stays_closed_while_a_later_scope_is_open_and_cannot_close_it()
    {
        using NativeStringColumn column = Build(["a", "b"]);
        NativeStringColumnReadScope stale = column.OpenRead();
        stale.Dispose();
        for (int i = 0; i < 3; i++)
        {
            using NativeStringColumnReadScope fresh = column.OpenRead();
            NativeStringColumnReadScope copy = stale;
            bool threw = false;
            try
            {
                _ = copy[0];
            }
            catch (ObjectDisposedException)
            {
                threw = true;
            }

            Assert.True(threw, "a disposed scope read while another scope of the column was open");
            stale.Dispose();
            Assert.Throws<InvalidOperationException>(column.Dispose);
            Assert.Equal("b", Encoding.UTF8.GetString(fresh[1]));
        }
    }

    [Fact]
    public void StringColumnAttack_arena_reset_racing_reads_gives_ObjectDisposed_or_a_refused_reset()
    {
        for (int round = 0; round < 20; round++)
        {
            using var arena = new JemArena();
            NativeStringColumn column;
            using (var builder = new NativeStringColumnBuilder(true, arena.Options))
            {
                for (int i = 0; i < 3000; i++)
                {
                    builder.Append(i % 9 == 0 ? null : "row" + i);
                }

                column = builder.Build();
            }

            using var go = new Barrier(2);
            var reader = Start(() =>
            {
                go.SignalAndWait();
                for (int i = 0; i < 300; i++)
                {
                    try
                    {
                        Assert.Equal(0, column.CountStartsWith("zz"u8));
                        Assert.Equal("row1", column.GetString(1));
                    }
                    catch (ObjectDisposedException)
                    {
                        return;
                    }
                }
            });
            go.SignalAndWait();
            while (true)
            {
                try
                {
                    arena.Reset();
                    break;
                }
                catch (InvalidOperationException)
                {
                    Thread.Yield();
                }
            }

            reader.Join();
            Assert.Throws<ObjectDisposedException>(() => column.GetString(1));
            column.Dispose();
        }
    }
}
