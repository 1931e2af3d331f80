using System.Text;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.Columns;

// Attacks on NativeDictionaryColumn through its public API only: each test pins a behaviour a hostile or
// careless user could break (a leak, a read outside the dictionary, a wrong answer, a wrong exception).
[Collection(LeakChecked.Name)]
public sealed class NativeDictionaryColumnAttackTests : LeakCheckedTest
{
    // A dictionary made by hand, with a validity bitmap of its own in which every value is set (so it has no null).
    private static NativeStringColumn DictionaryWithAllSetBitmap(params string[] values)
    {
        byte[][] bytes = [.. values.Select(Encoding.UTF8.GetBytes)];
        var offsets = new HugeArray<long>(values.Length + 1);
        var data = new HugeArray<byte>(Math.Max(1, bytes.Sum(b => b.Length)));
        var validity = new HugeArray<byte>(Math.Max(1, (values.Length + 7) / 8));
        long at = 0;
        for (int i = 0; i < values.Length; i++)
        {
            offsets[i] = at;
            foreach (byte b in bytes[i])
            {
                data[at++] = b;
            }
        }

        offsets[values.Length] = at;
        for (int i = 0; i < validity.Length; i++)
        {
            validity[i] = 0xFF;
        }

        return new NativeStringColumn(offsets, data, validity, values.Length, isUtf8: true);
    }

    [Fact]
    public void Dispose_while_the_dictionarys_own_validity_bitmap_is_leased_is_refused_frees_nothing_and_a_later_dispose_frees_all()
    {
        NativeStringColumn dictionary = DictionaryWithAllSetBitmap("a", "b");
        var indices = new HugeArray<int>(3);
        indices[0] = 1;
        indices[1] = 0;
        indices[2] = 1;
        var column = new NativeDictionaryColumn(indices, null, dictionary, 3);
        Assert.Equal(0, column.NullCount);
        using (MemoryLease<byte> lease = dictionary.Validity!.Lease())
        {
            var refused = Assert.Throws<InvalidOperationException>(column.Dispose);
            Assert.Contains("validity", refused.Message);
            Assert.True(column.Indices.IsValid);
            Assert.Equal("b", column.GetString(0));
        }

        column.Dispose();
        Assert.False(column.Indices.IsValid);
        Assert.False(dictionary.Data.IsValid);
        Assert.False(dictionary.Validity!.IsValid);
    }

    [Fact]
    public void Dispose_of_the_dictionary_alone_makes_the_column_refuse_reads_and_its_own_dispose_frees_the_rest()
    {
        NativeDictionaryColumn column = NativeDictionaryColumnTestData.Build(["x", "y", null, "x"]);
        column.Dictionary.Dispose();
        Assert.Throws<ObjectDisposedException>(() => column.GetString(0));
        Assert.Throws<ObjectDisposedException>(() => column.CountStartsWith("x"u8));
        Assert.Throws<ObjectDisposedException>(() => column.IndexOf("x"u8));
        using (var selection = new HugeArray<byte>(1))
        {
            Assert.Throws<ObjectDisposedException>(() => column.SelectStartsWith("x"u8, selection));
        }

        Assert.Throws<ObjectDisposedException>(() => column.ToStringColumn());
        column.Dispose();
        column.Dispose();
        Assert.False(column.Indices.IsValid);
        Assert.False(column.Validity!.IsValid);
    }

    [Fact]
    public void Searches_and_row_reads_agree_with_the_plain_columns_over_many_random_columns_and_prefixes()
    {
        var random = new Random(20261127);
        for (int round = 0; round < 60; round++)
        {
            bool isUtf8 = round % 3 != 0;
            int rows = round switch { 0 => 0, 1 => 1, 2 => 4095, 3 => 4097, 4 => 8200, _ => random.Next(0, 3000) };
            byte[][] alphabet = MakeValues(random, isUtf8, random.Next(1, 40));
            var source = new byte[]?[rows];
            for (int row = 0; row < rows; row++)
            {
                source[row] = random.Next(7) == 0 ? null : alphabet[random.Next(alphabet.Length)];
            }

            using NativeStringColumn plain = NativeDictionaryColumnTestData.BuildPlain(source, isUtf8);
            using NativeDictionaryColumn encoded = plain.ToDictionaryColumn();
            Assert.Equal(plain.Length, encoded.Length);
            Assert.Equal(plain.NullCount, encoded.NullCount);
            Assert.Equal(isUtf8, encoded.IsUtf8);

            // Patterns: every value, every prefix of some values, the empty pattern, and values nobody holds.
            List<byte[]> patterns = [[], [0xFF], [0xC3], "日"u8.ToArray()];
            patterns.AddRange(alphabet);
            foreach (byte[] value in alphabet.Take(8))
            {
                for (int cut = 0; cut <= value.Length; cut++)
                {
                    patterns.Add(value[..cut]);
                }
            }

            using var plainSelection = new HugeArray<byte>(Math.Max(1, (rows + 7) / 8) + 1);
            using var encodedSelection = new HugeArray<byte>(Math.Max(1, (rows + 7) / 8) + 1);
            foreach (byte[] pattern in patterns)
            {
                Assert.Equal(plain.IndexOf(pattern), encoded.IndexOf(pattern));
                long start = rows == 0 ? 0 : random.Next(0, rows + 1);
                Assert.Equal(plain.IndexOf(pattern, start), encoded.IndexOf(pattern, start));
                Assert.Equal(plain.CountStartsWith(pattern), encoded.CountStartsWith(pattern));
                Assert.Equal(plain.SelectStartsWith(pattern, plainSelection), encoded.SelectStartsWith(pattern, encodedSelection));
                for (int i = 0; i < (rows + 7) / 8; i++)
                {
                    Assert.Equal(plainSelection[i], encodedSelection[i]);
                }
            }

            for (int probe = 0; probe < Math.Min(rows, 50); probe++)
            {
                long row = random.Next(rows);
                byte[] pattern = patterns[random.Next(patterns.Count)];
                Assert.Equal(plain.IsNull(row), encoded.IsNull(row));
                Assert.Equal(plain.GetBytes(row), encoded.GetBytes(row));
                Assert.Equal(plain.GetByteCount(row), encoded.GetByteCount(row));
                Assert.Equal(plain.ValueEquals(row, pattern), encoded.ValueEquals(row, pattern));
                Assert.Equal(plain.StartsWith(row, pattern), encoded.StartsWith(row, pattern));
                Assert.Equal(plain.EndsWith(row, pattern), encoded.EndsWith(row, pattern));
                Assert.Equal(plain.Contains(row, pattern), encoded.Contains(row, pattern));
                Assert.Equal(Math.Sign(plain.CompareOrdinal(row, pattern)), Math.Sign(encoded.CompareOrdinal(row, pattern)));
                if (isUtf8)
                {
                    Assert.Equal(plain.GetString(row), encoded.GetString(row));
                }
            }

            using NativeStringColumn back = encoded.ToStringColumn();
            for (long row = 0; row < rows; row++)
            {
                Assert.Equal(plain.GetBytes(row), back.GetBytes(row));
            }
        }
    }

    [Fact]
    public void Indices_flipped_out_of_range_by_another_thread_during_searches_give_an_error_or_an_answer_never_a_stray_read()
    {
        string?[] values = [.. Enumerable.Range(0, 20_000).Select(i => i % 11 == 0 ? null : "v" + (i % 97))];
        using NativeDictionaryColumn column = NativeDictionaryColumnTestData.Build(values);
        using var selection = new HugeArray<byte>((column.Length + 7) / 8);
        long expected = values.Count(v => v is not null && v.StartsWith("v1", StringComparison.Ordinal));
        Workers.RunAlongside(
            1,
            (_, stop) =>
            {
                var random = new Random(5);
                while (!stop.IsCancellationRequested)
                {
                    long row = random.Next((int)column.Length);
                    int old = column.Indices[row];
                    column.Indices[row] = random.Next(2) == 0 ? int.MinValue : int.MaxValue;
                    column.Indices[row] = old;
                }
            },
            () =>
            {
                for (int i = 0; i < 200; i++)
                {
                    try
                    {
                        Assert.InRange(column.CountStartsWith("v1"u8), 0, expected);
                        Assert.InRange(column.SelectStartsWith("v1"u8, selection), 0, expected);
                        Assert.InRange(column.IndexOf("v5"u8), -1, column.Length - 1);
                    }
                    catch (InvalidDataException e)
                    {
                        Assert.Contains("index", e.Message, StringComparison.Ordinal);
                    }
                }
            });
        Assert.Equal(expected, column.CountStartsWith("v1"u8));
    }

    [Fact]
    public void A_builder_used_from_two_threads_refuses_the_second_and_keeps_every_row_the_first_appended()
    {
        using var builder = new NativeDictionaryColumnBuilder();
        long appended = 0;
        long refused = 0;
        using var start = new Barrier(2);
        Workers.Run(2, worker =>
        {
            string value = worker == 0 ? "left" : "right";
            start.SignalAndWait();
            for (int i = 0; i < 20_000; i++)
            {
                try
                {
                    builder.Append(value);
                    Interlocked.Increment(ref appended);
                }
                catch (InvalidOperationException e)
                {
                    Assert.Contains("thread", e.Message, StringComparison.OrdinalIgnoreCase);
                    Interlocked.Increment(ref refused);
                }
            }
        });
        Assert.Equal(40_000, appended + refused);
        using NativeDictionaryColumn column = builder.Build();
        Assert.Equal(appended, column.Length);
        Assert.Equal(appended, column.CountStartsWith("left"u8) + column.CountStartsWith("right"u8));
        Assert.InRange(column.Dictionary.Length, 1, 2);
    }

    [Fact]
    public void A_string_with_a_lone_surrogate_is_refused_by_the_searches_not_matched_as_U_FFFD()
    {
        // U+FFFD is what a lenient encoder writes for a lone surrogate: a row holding it must not match one.
        using NativeDictionaryColumn column = NativeDictionaryColumnTestData.Build(["\uFFFD", "x"]);
        using NativeStringColumn plain = column.ToStringColumn();
        Assert.Equal("value", Assert.Throws<ArgumentException>(() => column.IndexOf("\uD800")).ParamName);
        Assert.Equal("value", Assert.Throws<ArgumentException>(() => column.IndexOf("a\uDC00", 0)).ParamName);
        Assert.Equal("value", Assert.Throws<ArgumentException>(() => column.ValueEquals(0, "\uD800")).ParamName);
        Assert.Equal("value", Assert.Throws<ArgumentException>(() => plain.IndexOf("\uD800")).ParamName);
        Assert.Equal("value", Assert.Throws<ArgumentException>(() => plain.ValueEquals(0, "\uD800")).ParamName);
        Assert.Equal(0, column.IndexOf("\uFFFD"));
        Assert.True(column.ValueEquals(0, "\uFFFD"));
        Assert.Equal(0, plain.IndexOf("\uFFFD"));
    }

    [Fact]
    public void A_dictionary_already_disposed_is_refused_by_the_constructor()
    {
        NativeStringColumn dictionary = NativeDictionaryColumnTestData.BuildPlain([[0x61]], isUtf8: true);
        dictionary.Dispose();
        using var indices = new HugeArray<int>(1);
        Assert.Throws<ObjectDisposedException>(() => new NativeDictionaryColumn(indices, null, dictionary, 1));
        Assert.Throws<ObjectDisposedException>(() => new NativeDictionaryColumn(indices, null, dictionary, 0));
    }

    [Fact]
    public void A_null_rows_garbage_index_reads_as_null_everywhere_and_never_matches()
    {
        using NativeDictionaryColumn column = NativeDictionaryColumnTestData.Build(["a", null, "a", null, "ab"]);
        column.Indices[1] = int.MinValue;
        column.Indices[3] = 1_000_000;
        Assert.Null(column.GetString(1));
        Assert.Null(column.GetBytes(3));
        Assert.Equal(-1, column.GetIndex(1));
        Assert.Equal(0, column.GetByteCount(3));
        Assert.False(column.ValueEquals(1, ""u8));
        Assert.False(column.StartsWith(3, ""u8));
        Assert.Equal(-1, column.CompareOrdinal(1, ""u8));
        Assert.Equal(3, column.CountStartsWith(""u8));
        Assert.Equal(4, column.IndexOf("ab"u8));
        using (NativeDictionaryColumnReadScope values = column.OpenRead())
        {
            Assert.True(values[1].IsEmpty);
        }

        using NativeStringColumn plain = column.ToStringColumn();
        Assert.Equal(["a", null, "a", null, "ab"], Enumerable.Range(0, 5).Select(i => plain.GetString(i)));
        using NativeDictionaryColumn again = plain.ToDictionaryColumn();
        Assert.Equal(2, again.Dictionary.Length);
    }

    [Fact]
    public void A_scope_disposed_through_two_copies_releases_its_leases_once_so_another_open_scope_still_refuses_dispose()
    {
        NativeDictionaryColumn column = NativeDictionaryColumnTestData.Build(["a", null, "b"]);
        NativeDictionaryColumnReadScope first = column.OpenRead();
        NativeDictionaryColumnReadScope copy = first;
        using (NativeDictionaryColumnReadScope other = column.OpenRead())
        {
            first.Dispose();
            copy.Dispose();
            first.Dispose();
            ObjectDisposedException? closed = null;
            try
            {
                ReadFirst(copy);
            }
            catch (ObjectDisposedException e)
            {
                closed = e;
            }

            Assert.NotNull(closed);
            Assert.Throws<InvalidOperationException>(column.Dispose);
            Assert.Equal("a"u8.ToArray(), other[0].ToArray());
        }

        column.Dispose();
        Assert.False(column.Dictionary.Offsets.IsValid);
    }

    [Fact]
    public void Dispose_racing_searches_on_another_thread_is_refused_or_frees_everything_never_half()
    {
        for (int round = 0; round < 20; round++)
        {
            NativeDictionaryColumn column = NativeDictionaryColumnTestData.Build([.. Enumerable.Range(0, 5000).Select(i => i % 7 == 0 ? null : "k" + (i % 13))]);
            Workers.RunAlongside(
                1,
                (_, stop) =>
                {
                    while (!stop.IsCancellationRequested)
                    {
                        try
                        {
                            column.CountStartsWith("k1"u8);
                            Assert.Equal("k3", column.GetString(3));
                        }
                        catch (ObjectDisposedException)
                        {
                            return;
                        }
                    }
                },
                () =>
                {
                    // Refused while a search holds the arrays, by the column's checks or, for a lease taken just after
                    // them, by the array's own dispose; each retry frees what an earlier partial dispose left.
                    while (true)
                    {
                        try
                        {
                            column.Dispose();
                            return;
                        }
                        catch (InvalidOperationException e)
                        {
                            Assert.Contains("cannot be", e.Message, StringComparison.Ordinal);
                        }
                    }
                });
            column.Dispose();
            Assert.False(column.Indices.IsValid);
            Assert.False(column.Validity!.IsValid);
            Assert.False(column.Dictionary.Offsets.IsValid);
            Assert.False(column.Dictionary.Data.IsValid);
        }
    }

    private static int ReadFirst(NativeDictionaryColumnReadScope values) => values[0].Length;

    private static byte[][] MakeValues(Random random, bool isUtf8, int count)
    {
        string[] pieces = ["a", "ab", "é", "日本", "😀", "z", "", "\u0000", "ÿ"];
        var values = new HashSet<string>(StringComparer.Ordinal);
        var result = new List<byte[]>();
        while (result.Count < count)
        {
            byte[] value;
            if (isUtf8)
            {
                var text = new StringBuilder();
                int parts = random.Next(0, 5);
                for (int p = 0; p < parts; p++)
                {
                    text.Append(pieces[random.Next(pieces.Length)]);
                }

                value = Encoding.UTF8.GetBytes(text.ToString());
            }
            else
            {
                // Binary: any bytes, invalid UTF-8 included (lone continuation bytes, truncated sequences, 0xFF).
                value = new byte[random.Next(0, 6)];
                for (int b = 0; b < value.Length; b++)
                {
                    value[b] = random.Next(3) switch { 0 => (byte)random.Next(256), 1 => (byte)(0x80 | random.Next(64)), _ => (byte)"abé"u8[random.Next(3)] };
                }
            }

            if (values.Add(Convert.ToHexString(value)))
            {
                result.Add(value);
            }
        }

        return [.. result];
    }
}
