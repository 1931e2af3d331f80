using Apache.Arrow;
using Apache.Arrow.Types;

namespace jemalloc.Arrow.Tests;

/// <summary>
/// Hand-made Arrow dictionary arrays a careless or hostile producer could give: other index types, indices
/// out of range or garbage under null rows, slices, and chunks with different dictionaries.
/// </summary>
public sealed class DictionaryImportAttackTests
{
    private static readonly StringArray s_abc = new StringArray.Builder().Append("a").Append("b").Append("c").Build();

    [Fact]
    public void Chunks_with_different_and_overlapping_dictionaries_merge_into_one_holding_each_value_once()
    {
        var first = new DictionaryArray(new DictionaryType(Int32Type.Default, StringType.Default, false), new Int32Array.Builder().Append(2).Append(0).Append(0).Build(), s_abc);
        var dupes = new StringArray.Builder().Append("c").Append("d").Append("c").Build();
        var second = new DictionaryArray(new DictionaryType(Int32Type.Default, StringType.Default, false), new Int32Array.Builder().Append(2).Append(1).Append(0).Build(), dupes);
        using NativeDictionaryColumn column = new ChunkedArray([first, second]).ToNativeDictionaryColumn(AllocationOptions.Default);
        Assert.Equal(["c", "a", "a", "c", "d", "c"], Enumerable.Range(0, 6).Select(i => column.GetString(i)));
        Assert.Equal(3, column.Dictionary.Length);
        Assert.Equal(3, column.CountStartsWith("c"u8));
    }

    [Fact]
    public void Every_integer_index_type_reads_and_an_index_past_the_dictionary_in_any_of_them_is_refused()
    {
        (IArrowType Type, IArrowArray Good, IArrowArray Bad, string BadText)[] cases =
        [
            (Int8Type.Default, new Int8Array.Builder().Append(1).Build(), new Int8Array.Builder().Append(sbyte.MinValue).Build(), "-128"),
            (UInt8Type.Default, new UInt8Array.Builder().Append(1).Build(), new UInt8Array.Builder().Append(byte.MaxValue).Build(), "255"),
            (Int16Type.Default, new Int16Array.Builder().Append(1).Build(), new Int16Array.Builder().Append(3).Build(), "index 3"),
            (UInt16Type.Default, new UInt16Array.Builder().Append(1).Build(), new UInt16Array.Builder().Append(ushort.MaxValue).Build(), "65,535"),
            (UInt32Type.Default, new UInt32Array.Builder().Append(1).Build(), new UInt32Array.Builder().Append(uint.MaxValue).Build(), "4,294,967,295"),
            (Int64Type.Default, new Int64Array.Builder().Append(1).Build(), new Int64Array.Builder().Append(long.MinValue).Build(), "-9,223,372,036,854,775,808"),
            (UInt64Type.Default, new UInt64Array.Builder().Append(1).Build(), new UInt64Array.Builder().Append(3).Build(), "index 3"),
            (UInt64Type.Default, new UInt64Array.Builder().Append(1).Build(), new UInt64Array.Builder().Append(ulong.MaxValue).Build(), "index 18,446,744,073,709,551,615"),
        ];
        foreach ((IArrowType type, IArrowArray good, IArrowArray bad, string badText) in cases)
        {
            var dictionaryType = new DictionaryType(type, StringType.Default, false);
            using (NativeDictionaryColumn column = new DictionaryArray(dictionaryType, good, s_abc).ToNativeDictionaryColumn(AllocationOptions.Default))
            {
                Assert.Equal("b", column.GetString(0));
            }

            var refused = Assert.Throws<ArgumentException>(() => new DictionaryArray(dictionaryType, bad, s_abc).ToNativeDictionaryColumn(AllocationOptions.Default));
            Assert.Equal("column", refused.ParamName);
            Assert.Contains(badText, refused.Message, StringComparison.Ordinal);
        }
    }

    [Fact]
    public void A_null_rows_garbage_index_is_not_read_and_a_slice_reads_only_its_rows()
    {
        var indices = new Int32Array.Builder().Append(1).AppendNull().Append(2).Append(0).Build();
        // Under the null row, an index no dictionary has: Arrow does not define it, so it must not be used.
        ArrayData data = indices.Data;
        System.Runtime.InteropServices.MemoryMarshal.Cast<byte, int>(System.Runtime.InteropServices.MemoryMarshal.AsMemory(data.Buffers[1].Memory).Span)[1] = int.MinValue;
        var array = new DictionaryArray(new DictionaryType(Int32Type.Default, StringType.Default, false), indices, s_abc);
        using (NativeDictionaryColumn column = array.ToNativeDictionaryColumn(AllocationOptions.Default))
        {
            Assert.Equal(["b", null, "c", "a"], Enumerable.Range(0, 4).Select(i => column.GetString(i)));
            Assert.Equal(1, column.NullCount);
        }

        using NativeDictionaryColumn slice = ((DictionaryArray)array.Slice(1, 2)).ToNativeDictionaryColumn(AllocationOptions.Default);
        Assert.Equal(2, slice.Length);
        Assert.Null(slice.GetString(0));
        Assert.Equal("c", slice.GetString(1));
    }

    [Fact]
    public void A_column_of_only_nulls_with_garbage_indices_shows_as_an_empty_dictionary_and_copies_back_as_only_nulls()
    {
        using var builder = new NativeDictionaryColumnBuilder();
        for (int i = 0; i < 16; i++)
        {
            builder.AppendNull();
        }

        using NativeDictionaryColumn column = builder.Build();
        column.Indices[0] = int.MinValue;
        column.Indices[15] = int.MaxValue;
        using (NativeArrowColumn view = column.ToArrow(largeOffsets: false, maxChunkLength: 8))
        {
            Assert.Equal(2, view.ChunkCount);
            var first = Assert.IsType<DictionaryArray>(view.Chunks.ArrowArray(0));
            Assert.Equal(0, first.Dictionary.Length);
            Assert.Equal(8, first.NullCount);
            using NativeDictionaryColumn back = view.Chunks.ToNativeDictionaryColumn(AllocationOptions.Default);
            Assert.Equal(16, back.NullCount);
            Assert.Equal(0, back.Dictionary.Length);
        }

        Assert.Equal(0, column.Indices.Handle.LeaseCount);
    }
}
