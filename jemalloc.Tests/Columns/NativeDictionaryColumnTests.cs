using System.Text;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.Columns;

[Collection(LeakChecked.Name)]
public sealed class NativeDictionaryColumnTests : LeakCheckedTest
{
    private static readonly string?[] s_values = ["alpha", "", null, "héllo wörld", "alpha", "日本語", null, "alphabet", "", "al", "alpha"];

    private static NativeDictionaryColumn Build(IEnumerable<string?> values, bool isUtf8 = true)
    {
        using var builder = new NativeDictionaryColumnBuilder(isUtf8);
        foreach (string? value in values)
        {
            builder.Append(value);
        }

        return builder.Build();
    }

    private static NativeStringColumn BuildPlain(IEnumerable<string?> values)
    {
        using var builder = new NativeStringColumnBuilder();
        foreach (string? value in values)
        {
            builder.Append(value);
        }

        return builder.Build();
    }

    // A column whose dictionary is given as it is (it may name a value twice) and whose indices are set by hand.
    private static NativeDictionaryColumn Make(string[] dictionary, int[] indices, byte[]? validity = null)
    {
        NativeStringColumn values = BuildPlain(dictionary);
        var indexArray = new HugeArray<int>(Math.Max(1, indices.Length));
        for (int i = 0; i < indices.Length; i++)
        {
            indexArray[i] = indices[i];
        }

        HugeArray<byte>? bits = null;
        if (validity is not null)
        {
            bits = new HugeArray<byte>(validity.Length);
            for (int i = 0; i < validity.Length; i++)
            {
                bits[i] = validity[i];
            }
        }

        try
        {
            return new NativeDictionaryColumn(indexArray, bits, values, indices.Length);
        }
        catch
        {
            // A refused constructor takes nothing over: the caller still owns the arrays.
            indexArray.Dispose();
            bits?.Dispose();
            values.Dispose();
            throw;
        }
    }

    [Fact]
    public void Built_values_read_back_with_their_nulls_and_each_distinct_value_once_in_the_dictionary()
    {
        using NativeDictionaryColumn column = Build(s_values);
        Assert.Equal(s_values.Length, column.Length);
        Assert.Equal(2, column.NullCount);
        Assert.True(column.IsUtf8);
        Assert.NotNull(column.Validity);
        string[] distinct = [.. s_values.OfType<string>().Distinct()];
        Assert.Equal(distinct.Length, column.Dictionary.Length);
        Assert.Equal(distinct, Enumerable.Range(0, distinct.Length).Select(i => column.Dictionary.GetString(i)));
        for (int row = 0; row < s_values.Length; row++)
        {
            Assert.Equal(s_values[row], column.GetString(row));
            Assert.Equal(s_values[row] is null, column.IsNull(row));
            Assert.Equal(s_values[row] is null ? -1 : Array.IndexOf(distinct, s_values[row]), column.GetIndex(row));
            Assert.Equal(s_values[row] is null ? null : Encoding.UTF8.GetBytes(s_values[row]!), column.GetBytes(row));
            Assert.Equal(s_values[row] is null ? 0 : Encoding.UTF8.GetByteCount(s_values[row]!), column.GetByteCount(row));
        }
    }

    [Fact]
    public void Many_rows_and_many_distinct_values_grow_the_table_and_keep_every_row()
    {
        string?[] values = [.. Enumerable.Range(0, 50_000).Select(i => i % 13 == 0 ? null : $"value {i % 7_001}")];
        using NativeDictionaryColumn column = Build(values);
        Assert.Equal(7_001, column.Dictionary.Length);
        Assert.Equal(values.Count(v => v is null), column.NullCount);
        for (int row = 0; row < values.Length; row += 7)
        {
            Assert.Equal(values[row], column.GetString(row));
        }
    }

    [Fact]
    public void A_column_without_nulls_has_no_bitmap_and_an_empty_builder_builds_zero_rows()
    {
        using (NativeDictionaryColumn column = Build(["a", "b", "a"]))
        {
            Assert.Null(column.Validity);
            Assert.Equal([0, 1, 0], Enumerable.Range(0, 3).Select(r => column.GetIndex(r)));
        }

        using NativeDictionaryColumn empty = Build([]);
        Assert.Equal(0, empty.Length);
        Assert.Equal(0, empty.Dictionary.Length);
        Assert.Equal(-1, empty.IndexOf(""u8));
        Assert.Equal(0, empty.CountStartsWith(""u8));
        Assert.Throws<ArgumentOutOfRangeException>(() => empty.GetString(0));
        using NativeStringColumn plain = empty.ToStringColumn();
        Assert.Equal(0, plain.Length);
    }

    [Fact]
    public void A_column_of_only_nulls_has_an_empty_dictionary_and_reads_as_nulls()
    {
        using NativeDictionaryColumn column = Build([null, null, null]);
        Assert.Equal(0, column.Dictionary.Length);
        Assert.Equal(3, column.NullCount);
        Assert.Null(column.GetString(1));
        Assert.Equal(-1, column.GetIndex(1));
        using NativeDictionaryColumnReadScope values = column.OpenRead();
        Assert.Equal(0, values[2].Length);
        Assert.Equal(-1, column.IndexOf(""u8));
    }

    [Fact]
    public void Searches_match_a_managed_filter_over_the_same_rows()
    {
        string?[] values = [.. Enumerable.Range(0, 20_011).Select(i => i % 11 == 0 ? null : (i % 5) switch { 0 => "apple", 1 => "apricot", 2 => "banana", 3 => "", _ => "application" })];
        using NativeDictionaryColumn column = Build(values);
        using NativeStringColumn plain = BuildPlain(values);
        foreach (string pattern in new[] { "ap", "apple", "apricot", "", "b", "zz" })
        {
            byte[] bytes = Encoding.UTF8.GetBytes(pattern);
            long expected = values.Count(v => v is not null && v.StartsWith(pattern, StringComparison.Ordinal));
            Assert.Equal(expected, column.CountStartsWith(bytes));
            Assert.Equal(plain.CountStartsWith(bytes), column.CountStartsWith(bytes));
            using var selection = new HugeArray<byte>((values.Length + 7) / 8, (byte)0xFF);
            using var plainSelection = new HugeArray<byte>((values.Length + 7) / 8, (byte)0xFF);
            Assert.Equal(expected, column.SelectStartsWith(bytes, selection));
            plain.SelectStartsWith(bytes, plainSelection);
            for (long i = 0; i < selection.Length; i++)
            {
                Assert.Equal(plainSelection[i], selection[i]);
            }

            for (long start = 0; start < values.Length; start += 4_999)
            {
                Assert.Equal(plain.IndexOf(bytes, start), column.IndexOf(bytes, start));
            }
        }

        Assert.Equal(Array.IndexOf(values, "banana"), column.IndexOf("banana"));
        Assert.Equal(-1, column.IndexOf("banana", values.Length));
        Assert.Throws<ArgumentOutOfRangeException>(() => column.IndexOf("banana", values.Length + 1));
        Assert.Throws<ArgumentNullException>(() => column.IndexOf((string)null!));
    }

    [Fact]
    public void A_value_the_dictionary_names_twice_is_found_through_either_index_and_null_rows_never_match()
    {
        // Rows: a(0), null pointing at "x", x(1), x(3), a(2), null out of range.
        using NativeDictionaryColumn column = Make(["a", "x", "a", "x"], [0, 1, 1, 3, 2, 99], [0b011101]);
        Assert.Equal(2, column.NullCount);
        Assert.Equal(2, column.IndexOf("x"u8));
        Assert.Equal(3, column.IndexOf("x"u8, 3));
        Assert.Equal(4, column.IndexOf("a"u8, 1));
        Assert.Equal(2, column.CountStartsWith("x"u8));
        Assert.Equal(4, column.CountStartsWith(""u8));
        Assert.False(column.ValueEquals(1, "x"u8));
        Assert.True(column.ValueEquals(5, (string?)null));
        Assert.Null(column.GetString(5));
        using var selection = new HugeArray<byte>(1);
        Assert.Equal(4, column.SelectStartsWith(""u8, selection));
        Assert.Equal(0b011101, selection[0]);
    }

    [Fact]
    public void Row_comparisons_work_on_the_bytes_and_treat_null_rows_as_holding_nothing()
    {
        using NativeDictionaryColumn column = Build(s_values);
        Assert.True(column.ValueEquals(0, "alpha"));
        Assert.True(column.ValueEquals(1, ""u8));
        Assert.False(column.ValueEquals(2, ""u8));
        Assert.True(column.ValueEquals(2, (string?)null));
        Assert.True(column.StartsWith(7, "alpha"u8));
        Assert.False(column.StartsWith(2, ""u8));
        Assert.True(column.EndsWith(3, "wörld"u8));
        Assert.True(column.Contains(3, "llo"u8));
        Assert.True(column.CompareOrdinal(0, "alphabet"u8) < 0);
        Assert.Equal(0, column.CompareOrdinal(9, "al"u8));
        Assert.Equal(-1, column.CompareOrdinal(2, ""u8));
        Span<byte> room = stackalloc byte[5];
        Assert.Equal(5, column.CopyTo(0, room));
        Assert.Equal("destination", Assert.Throws<ArgumentException>(() => column.CopyTo(3, new byte[4])).ParamName);
        Assert.Equal("row", Assert.Throws<ArgumentOutOfRangeException>(() => column.GetString(s_values.Length)).ParamName);
        Assert.Equal("row", Assert.Throws<ArgumentOutOfRangeException>(() => column.GetIndex(-1)).ParamName);
    }

    [Fact]
    public void Plain_and_dictionary_layouts_convert_both_ways_keeping_every_row()
    {
        using NativeStringColumn plain = BuildPlain(s_values);
        using NativeDictionaryColumn encoded = plain.ToDictionaryColumn();
        Assert.Equal(s_values.OfType<string>().Distinct().Count(), encoded.Dictionary.Length);
        using NativeStringColumn expanded = encoded.ToStringColumn(AllocationOptions.Default);
        Assert.Equal(plain.NullCount, expanded.NullCount);
        for (int row = 0; row < s_values.Length; row++)
        {
            Assert.Equal(s_values[row], encoded.GetString(row));
            Assert.Equal(s_values[row], expanded.GetString(row));
        }
    }

    [Fact]
    public void Binary_values_keep_every_byte_and_are_not_decoded()
    {
        using var builder = new NativeDictionaryColumnBuilder(isUtf8: false);
        builder.Append([0xFF, 0x00, 0xC3]);
        builder.Append([]);
        builder.Append([0xFF, 0x00, 0xC3]);
        Assert.Equal(2, builder.DistinctCount);
        Assert.Equal(3, builder.Count);
        using NativeDictionaryColumn column = builder.Build();
        Assert.False(column.IsUtf8);
        Assert.Equal(new byte[] { 0xFF, 0x00, 0xC3 }, column.GetBytes(2));
        Assert.Throws<InvalidOperationException>(() => column.GetString(0));
        using NativeStringColumn plain = column.ToStringColumn();
        Assert.False(plain.IsUtf8);
    }

    [Fact]
    public void The_read_scope_gives_the_dictionarys_bytes_without_a_copy_and_refuses_after_dispose()
    {
        using NativeDictionaryColumn column = Build(s_values);
        var values = column.OpenRead();
        Assert.Equal(s_values.Length, values.Length);
        Assert.Equal(column.Dictionary.Length, values.DictionaryLength);
        unsafe
        {
            fixed (byte* first = values[4])
            {
                Assert.Equal(column.Dictionary.Data.Pointer, (nint)first);
            }
        }

        Assert.True(values.GetDictionaryValue(0).SequenceEqual("alpha"u8));
        Assert.Equal("index", Assert.Throws<ArgumentOutOfRangeException>(() => DictionaryValue(column, (int)column.Dictionary.Length)).ParamName);
        Assert.Equal("index", Assert.Throws<ArgumentOutOfRangeException>(() => DictionaryValue(column, -1)).ParamName);
        Assert.Equal(0, values.GetIndex(10));
        NativeDictionaryColumnReadScope copy = values;
        values.Dispose();
        copy.Dispose();
        Assert.Equal(0, column.Indices.Handle.LeaseCount);
        Assert.Equal(0, column.Dictionary.Data.Handle.LeaseCount);
        Assert.Equal(0, column.Dictionary.Offsets.Handle.LeaseCount);
        ObjectDisposedException? afterDispose = null;
        try
        {
            _ = values[0].Length;
        }
        catch (ObjectDisposedException e)
        {
            afterDispose = e;
        }

        SaysScopeEnded(afterDispose);
        afterDispose = null;
        try
        {
            _ = copy.GetIndex(0);
        }
        catch (ObjectDisposedException e)
        {
            afterDispose = e;
        }

        SaysScopeEnded(afterDispose);
        afterDispose = null;
        try
        {
            _ = copy.GetDictionaryValue(0).Length;
        }
        catch (ObjectDisposedException e)
        {
            afterDispose = e;
        }

        SaysScopeEnded(afterDispose);
        // The scope ended; the column was not freed.
        Assert.Equal("alpha", column.GetString(0));
    }

    private static void SaysScopeEnded(ObjectDisposedException? e)
    {
        DisposedMessages.SaysEnded(e, "NativeDictionaryColumnReadScope", "This NativeDictionaryColumnReadScope");
        Assert.Contains("open a new one with NativeDictionaryColumn.OpenRead()", e!.Message, StringComparison.Ordinal);
    }

    private static int DictionaryValue(NativeDictionaryColumn column, int index)
    {
        using NativeDictionaryColumnReadScope values = column.OpenRead();
        return values.GetDictionaryValue(index).Length;
    }

    [Fact]
    public void Dispose_under_an_open_scope_or_a_lease_of_the_dictionary_is_refused_and_frees_nothing()
    {
        NativeDictionaryColumn column = Build(s_values);
        using (NativeDictionaryColumnReadScope values = column.OpenRead())
        {
            var refused = Assert.Throws<InvalidOperationException>(column.Dispose);
            Assert.Contains("indices", refused.Message);
            Assert.Equal("alpha", Encoding.UTF8.GetString(values[0]));
            Assert.True(column.Indices.IsValid);
        }

        using (NativeStringColumnReadScope dictionary = column.Dictionary.OpenRead())
        {
            var refused = Assert.Throws<InvalidOperationException>(column.Dispose);
            Assert.Contains("dictionary", refused.Message);
            Assert.True(column.Indices.IsValid);
            Assert.True(column.Validity!.IsValid);
        }

        column.Dispose();
        column.Dispose();
        Assert.False(column.Dictionary.Data.IsValid);
        Assert.Throws<ObjectDisposedException>(() => column.GetString(0));
        Assert.Throws<ObjectDisposedException>(() => column.CountStartsWith("a"u8));
        Assert.Throws<ObjectDisposedException>(() => column.OpenRead());
        Assert.Throws<ObjectDisposedException>(() => column.ToStringColumn());
    }

    [Fact]
    public void Indices_changed_after_the_column_was_made_are_an_error_not_a_read_outside_the_dictionary()
    {
        string?[] values = [.. Enumerable.Range(0, 10_000).Select(i => $"v{i % 3}")];
        using NativeDictionaryColumn column = Build(values);
        using var selection = new HugeArray<byte>((values.Length + 7) / 8);
        foreach (int forged in new[] { 3, -1, int.MaxValue, int.MinValue })
        {
            column.Indices[9_000] = forged;
            var refused = Assert.Throws<InvalidDataException>(() => column.GetString(9_000));
            Assert.Contains("Row 9,000", refused.Message);
            Assert.Throws<InvalidDataException>(() => column.GetIndex(9_000));
            Assert.Throws<InvalidDataException>(() => column.CountStartsWith("v"u8));
            Assert.Throws<InvalidDataException>(() => column.SelectStartsWith("v"u8, selection));
            Assert.Throws<InvalidDataException>(() => column.IndexOf("nothing"u8));
            Assert.Throws<InvalidDataException>(() => column.IndexOf("v2"u8, 8_999));
            Assert.Throws<InvalidDataException>(() => column.ToStringColumn());
            Assert.Equal(2, column.IndexOf("v2"u8));
        }

        column.Indices[9_000] = 0;
        Assert.Equal("v0", column.GetString(9_000));
        Assert.Equal(values.Length, column.CountStartsWith("v"u8));
    }

    [Fact]
    public void The_constructor_checks_every_non_null_rows_index_and_the_arrays()
    {
        var refused = Assert.Throws<ArgumentException>(() => Make(["a", "b"], [0, 1, 2]));
        Assert.Equal("indices", refused.ParamName);
        Assert.Contains("Row 2", refused.Message);
        Assert.Equal("indices", Assert.Throws<ArgumentException>(() => Make(["a"], [0, -1])).ParamName);

        // An index out of range is allowed where the row is null: Arrow lets a null row's index be anything.
        using (NativeDictionaryColumn column = Make(["a"], [0, 7, 0], [0b101]))
        {
            Assert.Null(column.GetString(1));
            using NativeDictionaryColumnReadScope values = column.OpenRead();
            Assert.Equal(0, values[1].Length);
        }

        using NativeStringColumn dictionary = BuildPlain(["a"]);
        using NativeStringColumn withNull = BuildPlain(["a", null]);
        using var indices = new HugeArray<int>(4);
        using var shortBits = new HugeArray<byte>(1);
        using var longIndices = new HugeArray<int>(20);
        Assert.Equal("length", Assert.Throws<ArgumentOutOfRangeException>(() => new NativeDictionaryColumn(indices, null, dictionary, 5)).ParamName);
        Assert.Equal("length", Assert.Throws<ArgumentOutOfRangeException>(() => new NativeDictionaryColumn(indices, null, dictionary, -1)).ParamName);
        Assert.Equal("validity", Assert.Throws<ArgumentException>(() => new NativeDictionaryColumn(longIndices, shortBits, dictionary, 20)).ParamName);
        Assert.Equal("validity", Assert.Throws<ArgumentException>(() => new NativeDictionaryColumn(indices, dictionary.Data, dictionary, 4)).ParamName);
        Assert.Equal("dictionary", Assert.Throws<ArgumentException>(() => new NativeDictionaryColumn(indices, null, withNull, 4)).ParamName);
        Assert.Throws<ArgumentNullException>(() => new NativeDictionaryColumn(null!, null, dictionary, 0));
        Assert.Throws<ArgumentNullException>(() => new NativeDictionaryColumn(indices, null, null!, 0));
        Assert.True(dictionary.Data.IsValid);
    }

    [Fact]
    public void A_builder_given_a_capacity_builds_any_number_of_rows_and_refuses_a_negative_one()
    {
        foreach (int rows in new[] { 0, 5, 5_000, 20_000 })
        {
            using var builder = rows % 2 == 0 ? new NativeDictionaryColumnBuilder(true, 10_000) : new NativeDictionaryColumnBuilder(true, AllocationOptions.Default, 10_000);
            for (int i = 0; i < rows; i++)
            {
                builder.Append(i % 3 == 0 ? null : $"v{i % 10}");
            }

            using NativeDictionaryColumn column = builder.Build();
            Assert.Equal(rows, column.Length);
            Assert.Equal(rows, column.Indices.Length == 1 && rows == 0 ? 0 : column.Indices.Length);
            for (int i = 0; i < rows; i += 97)
            {
                Assert.Equal(i % 3 == 0 ? null : $"v{i % 10}", column.GetString(i));
            }
        }

        Assert.Equal("capacity", Assert.Throws<ArgumentOutOfRangeException>(() => new NativeDictionaryColumnBuilder(true, -1)).ParamName);
        Assert.Equal("capacity", Assert.Throws<ArgumentOutOfRangeException>(() => new NativeDictionaryColumnBuilder(true, AllocationOptions.Default, -1)).ParamName);
    }

    [Fact]
    public void A_builder_past_its_arenas_budget_refuses_the_value_and_keeps_the_rows_and_dictionary_before()
    {
        using var arena = new JemArena(budgetBytes: 512 * 1024);
        long appended = 0;
        using (var builder = new NativeDictionaryColumnBuilder(false, arena.Options))
        {
            // Every value is new: the dictionary's bytes and its hash table grow until the budget refuses.
            byte[] value = new byte[700];
            Exception? refused = null;
            for (int i = 0; i < 10_000 && refused is null; i++)
            {
                BitConverter.TryWriteBytes(value, i);
                refused = Record.Exception(() => builder.Append(value));
                if (refused is null)
                {
                    appended++;
                }
            }

            Assert.True(refused is ArenaBudgetExceededException or OutOfMemoryException, refused?.ToString() ?? "no refusal");
            Assert.Equal(appended, builder.Count);
            Assert.Equal(appended, builder.DistinctCount);

            // A value already in the dictionary needs no new room in it.
            BitConverter.TryWriteBytes(value, 0);
            Exception? again = Record.Exception(() => builder.Append(value));
            Exception? built = Record.Exception(() =>
            {
                using NativeDictionaryColumn column = builder.Build();
                Assert.Equal(appended + (again is null ? 1 : 0), column.Length);
                Assert.Equal(appended, column.Dictionary.Length);
                Assert.Equal(appended - 1, BitConverter.ToInt32(column.GetBytes(appended - 1)));
                Assert.Equal(again is null ? 0 : (int)(appended - 1), column.GetIndex(column.Length - 1));
            });
            Assert.True(built is null or ArenaBudgetExceededException or OutOfMemoryException, built?.ToString());
        }

        Assert.Equal(0, arena.UsedBytes);
    }

    [Fact]
    public void A_builder_builds_again_refuses_a_lone_surrogate_unchanged_and_refuses_after_dispose()
    {
        var builder = new NativeDictionaryColumnBuilder(true, AllocationOptions.Default);
        builder.Append("a");
        Assert.Throws<ArgumentException>(() => builder.Append("\uD800"));
        Assert.Equal(1, builder.Count);
        Assert.Equal(1, builder.DistinctCount);
        using (NativeDictionaryColumn first = builder.Build())
        {
            Assert.Equal(1, first.Length);
        }

        Assert.Equal(0, builder.Count);
        builder.AppendNull();
        builder.Append("b"u8);
        using (NativeDictionaryColumn second = builder.Build())
        {
            Assert.Null(second.GetString(0));
            Assert.Equal("b", second.GetString(1));
            Assert.Equal(1, second.Dictionary.Length);
        }

        builder.Append("left over");
        builder.Dispose();
        builder.Dispose();
        DisposedMessages.AssertDisposed("NativeDictionaryColumnBuilder", () => builder.Append("x"));
        DisposedMessages.AssertDisposed("NativeDictionaryColumnBuilder", () => builder.AppendNull());
        DisposedMessages.AssertDisposed("NativeDictionaryColumnBuilder", () => builder.Build());
    }
}
