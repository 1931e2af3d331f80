using System.Text;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.Columns;

[Collection(LeakChecked.Name)]
public sealed class NativeStringColumnTests : LeakCheckedTest
{
    private static readonly string?[] s_values = ["alpha", "", null, "héllo wörld", "日本語", "emoji 😀 𝄞", null, "alphabet", "beta", "al"];

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
    public void Built_values_read_back_with_their_nulls_lengths_and_offsets()
    {
        using NativeStringColumn column = Build(s_values);
        Assert.Equal(s_values.Length, column.Length);
        Assert.Equal(2, column.NullCount);
        Assert.True(column.IsUtf8);
        long bytes = s_values.Sum(v => v is null ? 0L : Encoding.UTF8.GetByteCount(v));
        Assert.Equal(bytes, column.ByteCount);
        Assert.NotNull(column.Validity);
        long offset = 0;
        for (int row = 0; row < s_values.Length; row++)
        {
            Assert.Equal(s_values[row], column.GetString(row));
            Assert.Equal(s_values[row] is null, column.IsNull(row));
            Assert.Equal(s_values[row] is null ? null : Encoding.UTF8.GetBytes(s_values[row]!), column.GetBytes(row));
            Assert.Equal(offset, column.Offsets[row]);
            offset += s_values[row] is null ? 0 : Encoding.UTF8.GetByteCount(s_values[row]!);
            Assert.Equal((int)(column.Offsets[row + 1] - column.Offsets[row]), column.GetByteCount(row));
        }

        Assert.Equal(bytes, column.Offsets[s_values.Length]);
    }

    [Fact]
    public void A_column_without_nulls_has_no_bitmap()
    {
        using NativeStringColumn column = Build(["a", "bc", ""]);
        Assert.Null(column.Validity);
        Assert.Equal(0, column.NullCount);
        Assert.False(column.IsNull(2));
        Assert.Equal("", column.GetString(2));
    }

    [Fact]
    public void An_empty_builder_builds_a_column_of_zero_rows()
    {
        using NativeStringColumn column = Build([]);
        Assert.Equal(0, column.Length);
        Assert.Equal(0, column.ByteCount);
        Assert.Equal(0, column.CountStartsWith("a"u8));
        Assert.Equal(-1, column.IndexOf(""u8));
        Assert.Throws<ArgumentOutOfRangeException>(() => column.GetString(0));
        using NativeStringColumnReadScope values = column.OpenRead();
        Assert.Equal(0, values.Length);
    }

    [Fact]
    public void Rows_past_a_byte_of_the_bitmap_keep_their_validity()
    {
        var values = Enumerable.Range(0, 1000).Select(i => i % 7 == 3 ? null : $"v{i}").ToArray();
        using NativeStringColumn column = Build(values);
        Assert.Equal(values.Count(v => v is null), column.NullCount);
        for (int row = 0; row < values.Length; row++)
        {
            Assert.Equal(values[row], column.GetString(row));
        }
    }

    [Fact]
    public void The_read_scope_gives_each_value_without_a_copy_and_refuses_after_dispose()
    {
        using NativeStringColumn column = Build(s_values);
        var values = column.OpenRead();
        Assert.True(values[3].SequenceEqual(Encoding.UTF8.GetBytes("héllo wörld")));
        Assert.True(values.IsNull(2));
        Assert.Equal(0, values[2].Length);
        unsafe
        {
            fixed (byte* first = values[0])
            {
                Assert.Equal(column.Data.Pointer, (nint)first);
            }
        }

        Assert.Equal("row", Assert.Throws<ArgumentOutOfRangeException>(() => ReadRow(column, s_values.Length)).ParamName);
        Assert.Equal("row", Assert.Throws<ArgumentOutOfRangeException>(() => ReadRow(column, -1)).ParamName);
        NativeStringColumnReadScope copy = values;
        values.Dispose();
        copy.Dispose(); // a copy's dispose closes nothing twice
        Assert.Equal(0, column.Offsets.Handle.LeaseCount);
        Assert.Equal(0, column.Data.Handle.LeaseCount);
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
            _ = copy.IsNull(0);
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
        DisposedMessages.SaysEnded(e, "NativeStringColumnReadScope", "This NativeStringColumnReadScope");
        Assert.Contains("open a new one with NativeStringColumn.OpenRead()", e!.Message, StringComparison.Ordinal);
    }

    private static int ReadRow(NativeStringColumn column, long row)
    {
        using NativeStringColumnReadScope values = column.OpenRead();
        return values[row].Length;
    }

    [Fact]
    public void Dispose_under_an_open_scope_is_refused_and_frees_nothing()
    {
        NativeStringColumn column = Build(s_values);
        using (NativeStringColumnReadScope values = column.OpenRead())
        {
            var refused = Assert.Throws<InvalidOperationException>(column.Dispose);
            Assert.Contains("offsets", refused.Message);
            Assert.Equal("alpha", Encoding.UTF8.GetString(values[0]));
            Assert.True(column.Data.IsValid);
        }

        column.Dispose();
        column.Dispose();
        Assert.Throws<ObjectDisposedException>(() => column.GetString(0));
        Assert.Throws<ObjectDisposedException>(() => column.CountStartsWith("a"u8));
        Assert.Throws<ObjectDisposedException>(() => column.OpenRead());
    }

    [Fact]
    public void Searches_compare_utf8_bytes_and_skip_null_rows()
    {
        using NativeStringColumn column = Build(s_values);
        Assert.Equal(0, column.IndexOf("alpha"));
        Assert.Equal(1, column.IndexOf(""u8));
        Assert.Equal(-1, column.IndexOf("alpha", 1));
        Assert.Equal(5, column.IndexOf("emoji 😀 𝄞"));
        Assert.Equal(3, column.CountStartsWith("al"u8));
        Assert.Equal(s_values.Count(v => v is not null), column.CountStartsWith(""u8));
        Assert.True(column.StartsWith(7, "alpha"u8));
        Assert.False(column.StartsWith(2, ""u8));
        Assert.True(column.EndsWith(3, "wörld"u8.ToArray()));
        Assert.True(column.Contains(5, "😀"u8.ToArray()));
        Assert.True(column.ValueEquals(2, (string?)null));
        Assert.False(column.ValueEquals(2, ""u8));
        Assert.True(column.ValueEquals(4, "日本語"));
        Assert.True(column.CompareOrdinal(0, "alphabet"u8) < 0);
        Assert.True(column.CompareOrdinal(8, "alpha"u8) > 0);
        Assert.Equal(0, column.CompareOrdinal(9, "al"u8));
        Assert.True(column.CompareOrdinal(2, ""u8) < 0);
        Assert.Equal("startRow", Assert.Throws<ArgumentOutOfRangeException>(() => column.IndexOf("a"u8, s_values.Length + 1)).ParamName);
        Assert.Equal(-1, column.IndexOf("a"u8, s_values.Length));
    }

    [Fact]
    public void A_prefix_selection_matches_a_managed_filter_over_many_rows()
    {
        var random = new Random(35);
        string[] prefixes = ["ab", "abc", "x", "日本", ""];
        var values = Enumerable.Range(0, 10_003)
            .Select(i => random.Next(10) == 0 ? null : prefixes[random.Next(prefixes.Length)] + random.Next(1000))
            .ToArray();
        using NativeStringColumn column = Build(values);
        using var selection = new HugeArray<byte>((values.Length + 7) / 8 + 1, (byte)0xAA);
        foreach (string prefix in prefixes)
        {
            byte[] utf8 = Encoding.UTF8.GetBytes(prefix);
            long expected = values.Count(v => v is not null && v.StartsWith(prefix, StringComparison.Ordinal));
            Assert.Equal(expected, column.CountStartsWith(utf8));
            Assert.Equal(expected, column.SelectStartsWith(utf8, selection));
            for (int row = 0; row < values.Length; row++)
            {
                bool selected = (selection[row >> 3] & (1 << (row & 7))) != 0;
                Assert.Equal(values[row] is not null && values[row]!.StartsWith(prefix, StringComparison.Ordinal), selected);
            }

            Assert.Equal(0, selection[(values.Length - 1) >> 3] >> ((values.Length - 1) % 8 + 1));
            Assert.Equal(0xAA, selection[selection.Length - 1]);
        }
    }

    [Fact]
    public void A_selection_bitmap_that_is_too_short_or_the_columns_own_is_refused()
    {
        using NativeStringColumn column = Build(s_values);
        using var small = new HugeArray<byte>(1);
        Assert.Equal("selection", Assert.Throws<ArgumentException>(() => column.SelectStartsWith("a"u8, small)).ParamName);
        Assert.Equal("selection", Assert.Throws<ArgumentException>(() => column.SelectStartsWith("a"u8, column.Validity!)).ParamName);
        Assert.Throws<ArgumentNullException>(() => column.SelectStartsWith("a"u8, null!));
    }

    [Fact]
    public void Binary_values_keep_every_byte_and_are_not_decoded()
    {
        byte[][] blobs = [[0, 255, 128], [], [0xC3], [1, 2, 3, 4, 5]];
        using var builder = new NativeStringColumnBuilder(isUtf8: false);
        foreach (byte[] blob in blobs)
        {
            builder.Append(blob);
        }

        using NativeStringColumn column = builder.Build();
        Assert.False(column.IsUtf8);
        for (int row = 0; row < blobs.Length; row++)
        {
            Assert.Equal(blobs[row], column.GetBytes(row));
        }

        Assert.Throws<InvalidOperationException>(() => column.GetString(0));
        Assert.Equal("destination", Assert.Throws<ArgumentException>(() => column.CopyTo(3, new byte[2])).ParamName);
        Assert.Equal(3, column.CopyTo(0, new byte[3]));
    }

    [Fact]
    public void A_lone_surrogate_is_refused_and_the_builder_goes_on_unchanged()
    {
        using var builder = new NativeStringColumnBuilder();
        builder.Append("before");
        Assert.Equal("value", Assert.Throws<ArgumentException>(() => builder.Append("bad \uD800 half")).ParamName);
        Assert.Equal(1, builder.Count);
        builder.Append("after");
        using NativeStringColumn column = builder.Build();
        Assert.Equal(2, column.Length);
        Assert.Equal("before", column.GetString(0));
        Assert.Equal("after", column.GetString(1));
    }

    [Fact]
    public void A_builder_builds_again_after_a_build_and_refuses_after_dispose()
    {
        var builder = new NativeStringColumnBuilder(isUtf8: true, AllocationOptions.WithHugePages);
        builder.Append("one");
        using (NativeStringColumn first = builder.Build())
        {
            Assert.Equal(0, builder.Count);
            builder.Append("two");
            builder.AppendNull();
            using NativeStringColumn second = builder.Build();
            Assert.Equal("one", first.GetString(0));
            Assert.Equal("two", second.GetString(0));
            Assert.Null(second.GetString(1));
        }

        builder.Append("left over");
        builder.Dispose();
        builder.Dispose();
        DisposedMessages.AssertDisposed("NativeStringColumnBuilder", () => builder.Append("x"));
        DisposedMessages.AssertDisposed("NativeStringColumnBuilder", () => builder.Build());
    }

    [Fact]
    public void The_constructor_takes_arrays_in_arrows_layout()
    {
        var offsets = new HugeArray<long>(4);
        offsets[1] = 2;
        offsets[2] = 2;
        offsets[3] = 5;
        var data = new HugeArray<byte>(8);
        for (int i = 0; i < 5; i++)
        {
            data[i] = (byte)('a' + i);
        }

        var validity = new HugeArray<byte>(1, (byte)0b101);
        using var column = new NativeStringColumn(offsets, data, validity, 3, isUtf8: true);
        Assert.Equal(["ab", null, "cde"], Enumerable.Range(0, 3).Select(r => column.GetString(r)));
        Assert.Equal(1, column.NullCount);
        Assert.Equal(5, column.ByteCount);
    }

    [Theory]
    [InlineData(new long[] { 0, 3, 2 }, 8, "before it starts")]
    [InlineData(new long[] { 0, 3, 9 }, 8, "past the end")]
    [InlineData(new long[] { -1, 3, 4 }, 8, "first offset")]
    [InlineData(new long[] { 9, 9, 9 }, 8, "first offset")]
    public void Offsets_that_leave_the_data_block_are_refused(long[] offsetValues, int dataBytes, string expected)
    {
        using var offsets = new HugeArray<long>(offsetValues.Length);
        for (int i = 0; i < offsetValues.Length; i++)
        {
            offsets[i] = offsetValues[i];
        }

        using var data = new HugeArray<byte>(dataBytes);
        var refused = Assert.Throws<ArgumentException>(() => new NativeStringColumn(offsets, data, null, offsetValues.Length - 1, isUtf8: true));
        Assert.Equal("offsets", refused.ParamName);
        Assert.Contains(expected, refused.Message);
    }

    [Fact]
    public void Lengths_and_bitmaps_that_do_not_fit_are_refused()
    {
        using var offsets = new HugeArray<long>(3);
        using var data = new HugeArray<byte>(4);
        using var shortBits = new HugeArray<byte>(1);
        Assert.Equal("length", Assert.Throws<ArgumentOutOfRangeException>(() => new NativeStringColumn(offsets, data, null, 3, true)).ParamName);
        Assert.Equal("length", Assert.Throws<ArgumentOutOfRangeException>(() => new NativeStringColumn(offsets, data, null, -1, true)).ParamName);
        Assert.Equal("validity", Assert.Throws<ArgumentException>(() => new NativeStringColumn(offsets, data, data, 2, true)).ParamName);
        using var longOffsets = new HugeArray<long>(20);
        Assert.Equal("validity", Assert.Throws<ArgumentException>(() => new NativeStringColumn(longOffsets, data, shortBits, 19, true)).ParamName);
        Assert.Throws<ArgumentNullException>(() => new NativeStringColumn(null!, data, null, 0, true));
        Assert.Throws<ArgumentNullException>(() => new NativeStringColumn(offsets, null!, null, 0, true));
    }

    [Fact]
    public void Offsets_changed_after_the_column_was_made_are_an_error_not_a_read_outside_the_block()
    {
        using NativeStringColumn column = Build(["abc", "de", "f"]);
        column.Offsets[2] = 1L << 40;
        var refused = Assert.Throws<InvalidDataException>(() => column.GetString(1));
        Assert.Contains("Row 1", refused.Message);
        Assert.Throws<InvalidDataException>(() => column.CountStartsWith("a"u8));
        Assert.Throws<InvalidDataException>(() => column.IndexOf("zz"u8));
        column.Offsets[2] = -5;
        Assert.Throws<InvalidDataException>(() => column.GetBytes(2));
        column.Offsets[2] = 5;
        Assert.Equal("f", column.GetString(2));
    }
}
