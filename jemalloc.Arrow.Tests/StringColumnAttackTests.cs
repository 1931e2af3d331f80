using System.Runtime.InteropServices;
using System.Text;
using Apache.Arrow;
using Apache.Arrow.C;
using Apache.Arrow.Types;

namespace jemalloc.Arrow.Tests;

/// <summary>Hostile use of NativeStringColumn.ToArrow, ExportChunk of its views, and ToNativeStringColumn.</summary>
public sealed unsafe class StringColumnAttackTests
{
    private static NativeStringColumn FromArrays(long[] offsetValues, byte[] bytes, byte[]? bits = null)
    {
        var offsets = new HugeArray<long>(offsetValues.Length);
        var data = new HugeArray<byte>(bytes.Length);
        HugeArray<byte>? validity = bits is null ? null : new HugeArray<byte>(bits.Length);
        for (int i = 0; i < offsetValues.Length; i++)
        {
            offsets[i] = offsetValues[i];
        }

        data.CopyFrom(bytes, 0);
        if (bits is not null)
        {
            validity!.CopyFrom(bits, 0);
        }

        return new NativeStringColumn(offsets, data, validity, offsetValues.Length - 1, true);
    }

    // Every chunk's value buffer must lie inside the column's data block.
    private static void AssertValueBuffersInsideTheBlock(NativeStringColumn column, NativeArrowColumn view)
    {
        long blockStart = column.Data.Pointer;
        long blockEnd = blockStart + column.Data.Length;
        for (int c = 0; c < view.ChunkCount; c++)
        {
            ArrayData data = view.Chunks.ArrowArray(c).Data;
            long start = view.GetValueAddress(c);
            long end = start + data.Buffers[2].Length;
            Assert.True(start >= blockStart && end <= blockEnd, $"Chunk {c}'s value buffer is bytes [{start - blockStart}, {end - blockStart}) of a data block of {column.Data.Length} bytes.");
        }
    }

    [Fact]
    public void StringColumnAttack_empty_rows_at_the_end_of_a_full_data_block_stay_inside_it_with_32_bit_offsets()
    {
        // Rows 1 and 2 are empty and start at the end of the block: a chunk of them must not show a byte past it.
        using NativeStringColumn column = FromArrays([0, 3, 3, 3], "abc"u8.ToArray());
        using NativeArrowColumn view = column.ToArrow(largeOffsets: false, maxChunkLength: 1);
        Assert.Equal(3, view.ChunkCount);
        AssertValueBuffersInsideTheBlock(column, view);
    }

    [Fact]
    public void StringColumnAttack_a_column_whose_first_offset_is_the_end_of_its_block_stays_inside_it()
    {
        using NativeStringColumn column = FromArrays([2, 2], "ab"u8.ToArray());
        using NativeArrowColumn view = column.ToArrow(largeOffsets: false);
        AssertValueBuffersInsideTheBlock(column, view);
        Assert.Equal("", ((StringArray)view.Array).GetString(0));
    }

    [Fact]
    public void StringColumnAttack_a_zero_row_column_whose_offset_is_the_end_of_its_block_stays_inside_it()
    {
        using NativeStringColumn column = FromArrays([1], "a"u8.ToArray());
        using NativeArrowColumn view = column.ToArrow(largeOffsets: false);
        Assert.Equal(0, view.Length);
        AssertValueBuffersInsideTheBlock(column, view);
    }

    [Fact]
    public void StringColumnAttack_built_column_with_trailing_empty_values_in_small_chunks_stays_inside_the_block()
    {
        using NativeStringColumn column = TestColumns.Strings(["abc", "", "", "", "", "", "", "", "", ""]);
        using NativeArrowColumn view = column.ToArrow(largeOffsets: false, maxChunkLength: 2);
        AssertValueBuffersInsideTheBlock(column, view);
    }

    [Fact]
    public void StringColumnAttack_offsets_changed_after_ToArrow_are_not_exported_unchecked_to_C()
    {
        using NativeStringColumn column = TestColumns.Strings(["abc", "de", "f"]);
        using NativeArrowColumn view = column.ToArrow(largeOffsets: true);
        // The view shares the column's 64-bit offsets; the column's arrays are public and writable.
        column.Offsets[2] = 1L << 40;
        CArrowArray* array = CArrowArray.Create();
        try
        {
            Exception? refused = Record.Exception(() => view.ExportChunk(0, array));
            // A C consumer trusts the offsets it is given: an export must either refuse, or carry offsets that were checked.
            if (refused is null)
            {
                long* exportedOffsets = (long*)((nint*)array->buffers)[1];
                Assert.True(exportedOffsets[2] <= column.Data.Length, $"The export handed C an offset of {exportedOffsets[2]:N0} into a data block of {column.Data.Length:N0} bytes.");
            }
            else
            {
                Assert.True(refused is ArgumentException or InvalidDataException, refused.ToString());
            }
        }
        finally
        {
            CArrowArray.Free(array);
            column.Offsets[2] = 5;
        }
    }

    [Fact]
    public void StringColumnAttack_offsets_changed_after_ToArrow_do_not_reach_the_view()
    {
        using NativeStringColumn column = TestColumns.Strings(["abc", "de", "f"]);
        using NativeArrowColumn view = column.ToArrow(largeOffsets: true);
        var strings = (LargeStringArray)view.Array;
        column.Offsets[2] = 1L << 40;
        // The view's offsets were copied (and checked) when it was made: it still shows the column as it was then.
        Assert.Equal("de", strings.GetString(1));
        Assert.Equal("f", strings.GetString(2));
        column.Offsets[2] = 5;
    }

    [Fact]
    public void StringColumnAttack_validity_cleared_after_ToArrow_keeps_the_null_count_counted_when_the_view_was_made()
    {
        using NativeStringColumn column = TestColumns.Strings(["a", null, "c", "d", "e", "f", "g", "h", "i"]);
        using NativeArrowColumn view = column.ToArrow();
        column.Validity![0] = 0;
        IArrowArray chunk = view.Chunks.ArrowArray(0);
        // As documented: the bitmap is the column's own (a change shows through), the null count is the one
        // counted when the view was made, as for every native view. Change the bitmap under a view and the two disagree.
        Assert.Equal(1, chunk.NullCount);
        Assert.True(chunk.IsNull(0));
        column.Validity[0] = 0xFD;
        Assert.False(chunk.IsNull(0));
    }

    [Fact]
    public void StringColumnAttack_column_dispose_under_a_view_or_export_is_refused_and_after_both_the_memory_goes()
    {
        NativeStringColumn column = TestColumns.Strings(["abc", null, "de"]);
        NativeArrowColumn view = column.ToArrow(largeOffsets: false);
        CArrowArray* array = CArrowArray.Create();
        try
        {
            view.ExportChunk(0, array);
            Assert.Throws<InvalidOperationException>(column.Dispose);
            view.Dispose();
            Assert.Throws<InvalidOperationException>(column.Dispose);
            Assert.Equal("abc", column.GetString(0));
        }
        finally
        {
            CArrowArray.Free(array);
        }

        column.Dispose();
        Assert.Throws<ObjectDisposedException>(() => column.GetString(0));
    }

    [Fact]
    public void StringColumnAttack_an_arrow_array_kept_after_view_and_column_are_disposed_throws_instead_of_reading_freed_memory()
    {
        NativeStringColumn column = TestColumns.Strings(["abc", null, "de"]);
        NativeArrowColumn view = column.ToArrow(largeOffsets: true);
        var kept = (LargeStringArray)view.Array;
        view.Dispose();
        column.Dispose();
        Assert.ThrowsAny<ObjectDisposedException>(() => kept.GetString(0));
    }

    [Fact]
    public void StringColumnAttack_arena_reset_under_a_view_is_refused()
    {
        using var arena = new JemArena();
        NativeStringColumn column;
        using (var builder = new NativeStringColumnBuilder(true, arena.Options))
        {
            builder.Append("in arena");
            builder.AppendNull();
            column = builder.Build();
        }

        using (NativeArrowColumn view = column.ToArrow())
        {
            // Only the view (and the builder's writers, gone) may hold the arena now.
            Assert.Throws<InvalidOperationException>(arena.Reset);
            Assert.Equal("in arena", ((LargeStringArray)view.Array).GetString(0));
        }

        arena.Reset();
        Assert.Throws<ObjectDisposedException>(() => column.ToArrow());
        column.Dispose();
    }

    [Theory]
    [InlineData(3)]
    [InlineData(7)]
    public void StringColumnAttack_chunk_length_not_a_multiple_of_8_with_nulls_is_refused(int chunk)
    {
        using NativeStringColumn column = TestColumns.Strings(["a", null, "b"]);
        Assert.Throws<ArgumentException>(() => column.ToArrow(maxChunkLength: chunk));
        Assert.Throws<ArgumentOutOfRangeException>(() => column.ToArrow(maxChunkLength: -8));
    }

    [Fact]
    public void StringColumnAttack_chunks_with_nulls_round_trip_through_ToNativeStringColumn()
    {
        string?[] values = Enumerable.Range(0, 37).Select(i => i % 3 == 1 ? null : "r" + i).ToArray();
        using NativeStringColumn column = TestColumns.Strings(values);
        foreach (bool large in new[] { true, false })
        {
            using NativeArrowColumn view = column.ToArrow(large, maxChunkLength: 8);
            Assert.Equal(5, view.ChunkCount);
            using NativeStringColumn back = view.Chunks.ToNativeStringColumn(default);
            Assert.Equal(values, Enumerable.Range(0, 37).Select(i => back.GetString(i)));
        }
    }

    private static ArrayData Forged(IArrowType type, int length, int offset, byte[]? bits, byte[] offsets, byte[] data) =>
        new(type, length, bits is null ? 0 : -1, offset, [bits is null ? ArrowBuffer.Empty : new ArrowBuffer(bits), new ArrowBuffer(offsets), new ArrowBuffer(data)]);

    private static byte[] Ints(params int[] values) => MemoryMarshal.AsBytes(values.AsSpan()).ToArray();

    private static byte[] Longs(params long[] values) => MemoryMarshal.AsBytes(values.AsSpan()).ToArray();

    public static TheoryData<string> ForgedCases() => ["decreasing", "negative", "past-data", "offset-overflow", "huge-offset", "negative-length", "negative-offset", "short-offsets", "short-bits", "large-huge", "large-negative", "two-buffers"];

    [Theory]
    [MemberData(nameof(ForgedCases))]
    public void StringColumnAttack_forged_arrow_arrays_are_refused_with_ArgumentException(string forgery)
    {
        byte[] text = "abcdef"u8.ToArray();
        Func<ArrayData> make = forgery switch
        {
            "decreasing" => () => Forged(StringType.Default, 3, 0, null, Ints(0, 4, 2, 6), text),
            "negative" => () => Forged(StringType.Default, 2, 0, null, Ints(0, -3, 6), text),
            "past-data" => () => Forged(StringType.Default, 2, 0, null, Ints(0, 3, 7), text),
            "offset-overflow" => () => Forged(StringType.Default, 10, int.MaxValue - 2, null, Ints(0, 3, 6), text),
            "huge-offset" => () => Forged(StringType.Default, 1, 1 << 29, null, Ints(0, 3, 6), text),
            "negative-length" => () => Forged(StringType.Default, -1, 0, null, Ints(0, 3, 6), text),
            "negative-offset" => () => Forged(StringType.Default, 1, -1, null, Ints(0, 3, 6), text),
            "short-offsets" => () => Forged(StringType.Default, 3, 0, null, Ints(0, 3, 6), text),
            "short-bits" => () => Forged(StringType.Default, 9, 0, [0xFF], Ints(0, 1, 2, 3, 4, 5, 6, 6, 6, 6), text),
            "large-huge" => () => Forged(LargeStringType.Default, 2, 0, null, Longs(0, 3, long.MaxValue), text),
            "large-negative" => () => Forged(LargeStringType.Default, 2, 0, null, Longs(0, long.MinValue, 3), text),
            "two-buffers" => () => new ArrayData(StringType.Default, 1, 0, 0, [ArrowBuffer.Empty, new ArrowBuffer(Ints(0, 1))]),
            _ => throw new ArgumentOutOfRangeException(nameof(forgery)),
        };
        ArrayData data;
        IArrowArray array;
        try
        {
            data = make();
            array = ArrowArrayFactory.BuildArray(data);
        }
        catch (Exception e) when (e is ArgumentException or InvalidOperationException)
        {
            return; // Arrow itself refused to make it.
        }

        Exception? refused = Record.Exception(() =>
        {
            using NativeStringColumn column = array.ToNativeStringColumn(default);
        });
        Assert.True(refused is ArgumentException, $"{forgery}: {refused?.ToString() ?? "no exception"}");
    }

    [Fact]
    public void StringColumnAttack_an_imported_export_with_changed_offsets_is_refused_by_ToNativeStringColumn()
    {
        using NativeStringColumn column = TestColumns.Strings(["abc", "de", "f"]);
        using NativeArrowColumn view = column.ToArrow(largeOffsets: false);
        CArrowArray* array = CArrowArray.Create();
        try
        {
            view.ExportChunk(0, array);
            int* offsets = (int*)((nint*)array->buffers)[1];
            offsets[1] = 5;
            offsets[2] = 1;
            using IArrowArray imported = CArrowArrayImporter.ImportArray(array, StringType.Default);
            Assert.Throws<ArgumentException>(() => imported.ToNativeStringColumn(default));
        }
        finally
        {
            CArrowArray.Free(array);
        }
    }

    [Fact]
    public void StringColumnAttack_empty_and_zero_row_arrays_give_zero_row_columns()
    {
        using var empty = new ChunkedArray([new StringArray.Builder().Build()]);
        using NativeStringColumn column = empty.ToNativeStringColumn(default);
        Assert.Equal(0, column.Length);
        using NativeArrowColumn view = column.ToArrow();
        Assert.Equal(0, view.Length);
        var builder = new StringArray.Builder();
        builder.Append("");
        builder.AppendNull();
        using StringArray two = builder.Build();
        using NativeStringColumn back = two.ToNativeStringColumn(default);
        Assert.Equal("", back.GetString(0));
        Assert.Null(back.GetString(1));
        Assert.Equal(Encoding.UTF8.GetBytes(""), back.GetBytes(0));
    }

    [Fact]
    public void StringColumnAttack_offsets_changed_while_ToArrow_builds_never_give_buffers_outside_the_block()
    {
        // Between ToArrow's check of the offsets and its reading them again for the chunks and their own 32-bit offsets.
        using NativeStringColumn column = TestColumns.Strings(Enumerable.Range(0, 512).Select(i => "v" + i));
        long good = column.Offsets[256];
        using var stop = new CancellationTokenSource();
        var attacker = new Thread(() =>
        {
            int k = 0;
            while (!stop.IsCancellationRequested)
            {
                column.Offsets[256] = (k++ & 1) == 0 ? 1L << 40 : good;
            }

            column.Offsets[256] = good;
        });
        attacker.Start();
        var problems = new List<string>();
        try
        {
            var deadline = DateTime.UtcNow.AddSeconds(2);
            while (DateTime.UtcNow < deadline && problems.Count == 0)
            {
                NativeArrowColumn view;
                try
                {
                    view = column.ToArrow(largeOffsets: false, maxChunkLength: 1);
                }
                catch (ArgumentException)
                {
                    continue;
                }

                using (view)
                {
                    long blockStart = column.Data.Pointer;
                    long blockEnd = blockStart + column.Data.Length;
                    for (int c = 0; c < view.ChunkCount; c++)
                    {
                        ArrayData data = view.Chunks.ArrowArray(c).Data;
                        long start = view.GetValueAddress(c);
                        ReadOnlySpan<int> offsets = MemoryMarshal.Cast<byte, int>(data.Buffers[1].Span);
                        if (start < blockStart || start + data.Buffers[2].Length > blockEnd + 1 || offsets[^1] > data.Buffers[2].Length)
                        {
                            problems.Add($"chunk {c}: value buffer at {start - blockStart} of {column.Data.Length}, {data.Buffers[2].Length} bytes, last offset {offsets[^1]}");
                        }
                    }
                }
            }
        }
        finally
        {
            stop.Cancel();
            attacker.Join();
        }

        Assert.True(problems.Count == 0, string.Join(Environment.NewLine, problems));
    }

    [Fact]
    public void StringColumnAttack_ToNativeStringColumn_past_an_arenas_budget_reports_the_budget_and_frees_everything()
    {
        var builder = new BinaryArray.Builder();
        for (int i = 0; i < 16; i++)
        {
            builder.Append(new byte[1000].AsSpan());
        }

        using BinaryArray array = builder.Build();
        var problems = new List<string>();
        for (int kib = 26; kib <= 64; kib++)
        {
            using var arena = new JemArena(budgetBytes: kib * 1024);
            Exception? e = Record.Exception(() => array.ToNativeStringColumn(arena.Options).Dispose());
            if (e is not (null or ArenaBudgetExceededException or OutOfMemoryException))
            {
                problems.Add($"{kib} KiB: {e.GetType().Name}: {e.Message}");
            }

            if (arena.UsedBytes != 0)
            {
                problems.Add($"{kib} KiB: {arena.UsedBytes:N0} bytes left in the arena");
            }
        }

        Assert.True(problems.Count == 0, string.Join(Environment.NewLine, problems));
    }
}
