using System.Text;
using Apache.Arrow;
using Apache.Arrow.C;
using Apache.Arrow.Types;
using jemalloc.Tests.Support;

namespace jemalloc.Arrow.Tests;

/// <summary>
/// A compiled C program (native/read_export.c, <c>read_dictionary_export</c>) reads
/// <see cref="NativeDictionaryColumn"/>s exported through the Arrow C Data Interface: the index buffer it
/// reads is the column's own block, its hash of the rows' values matches the one computed here, an index
/// outside the dictionary is reported rather than read, and its releases give back what the export held.
/// </summary>
public sealed unsafe class CDataInterfaceDictionaryConsumerTests
{
    private const int Rows = 50_003;
    private const int ChunkRows = 16_000;
    private const string Gcc = "ELF shared libraries built with gcc";

    // Nulls, empty strings and values with non-ASCII characters, 211 of them repeated.
    private static string? Category(int i) => i % 5 == 0 ? null : i % 13 == 0 ? string.Empty : $"kategorie-{i % 211}-日本-ü";

    private static string?[] Categories(int rows) => [.. Enumerable.Range(0, rows).Select(Category)];

    // The hash and byte count read_dictionary_export computes, from the values in row order.
    private static (long Bytes, uint Hash) Summary(IEnumerable<string?> values)
    {
        (long bytes, string hash) = NodeArrow.StringSummary.Of(values.Select(v => v is null ? null : Encoding.UTF8.GetBytes(v)));
        return (bytes, uint.Parse(hash, System.Globalization.CultureInfo.InvariantCulture));
    }

    [LinuxOnlyTheory(Gcc)]
    [InlineData(true, true)]
    [InlineData(false, true)]
    [InlineData(true, false)]
    [InlineData(false, false)]
    public void A_C_program_reads_every_chunk_of_an_exported_dictionary_column_in_place(bool large, bool isUtf8)
    {
        string?[] values = Categories(Rows);
        using NativeDictionaryColumn column = TestColumns.Dictionary(values, isUtf8);
        Assert.NotNull(column.Validity);
        int heldIndices = column.Indices.Handle.LeaseCount;
        using (NativeArrowColumn view = column.ToArrow(large, ChunkRows))
        {
            Assert.Equal((Rows + ChunkRows - 1) / ChunkRows, view.ChunkCount);
            long row = 0;
            for (int c = 0; c < view.ChunkCount; c++)
            {
                int count = view.Chunks.ArrowArray(c).Length;
                string?[] rows = values[(int)row..(int)(row + count)];
                (long bytes, uint hash) = Summary(rows);
                CConsumer.DictionaryResult seen = ExportAndRead(view, c, column);
                Assert.Equal("i", seen.FormatText());
                Assert.Equal(isUtf8 ? (large ? "U" : "u") : (large ? "Z" : "z"), seen.ValueFormatText());
                Assert.Equal(0, seen.Ordered);
                Assert.Equal(1, seen.ZeroCopy);
                Assert.Equal(1, seen.Released);
                Assert.Equal(column.Indices.Pointer + (row * sizeof(int)), seen.IndicesAddress);
                Assert.Equal(column.Validity.Pointer + (row / 8), seen.ValidityAddress);
                Assert.Equal(count, seen.Length);
                Assert.Equal(rows.Count(v => v is null), seen.NullCount);
                Assert.Equal(seen.NullCount, seen.DeclaredNullCount);
                Assert.Equal(0, seen.NullValueRows);
                Assert.Equal(column.Dictionary.Length, seen.DictionaryLength);
                Assert.Equal(bytes, seen.Bytes);
                Assert.Equal(hash, seen.Hash);
                row += count;
            }

            Assert.Equal(Rows, row);
        }

        Assert.Equal(heldIndices, column.Indices.Handle.LeaseCount);
        Assert.Equal(0, column.Dictionary.Data.Handle.LeaseCount);
    }

    [LinuxOnlyFact(Gcc)]
    public void An_export_keeps_the_column_after_its_view_is_disposed_until_the_C_program_releases_it()
    {
        string?[] values = Categories(Rows);
        NativeDictionaryColumn column = TestColumns.Dictionary(values);
        CArrowArray* array = CArrowArray.Create();
        CArrowSchema* schema = CArrowSchema.Create();
        try
        {
            using (NativeArrowColumn view = column.ToArrow(largeOffsets: true, ChunkRows))
            {
                CArrowSchemaExporter.ExportType(view.DataType, schema);
                view.ExportChunk(1, array);
            }

            // Only the export holds the column now: disposing it is refused, and the memory stays the column's.
            Assert.True(column.Indices.Handle.LeaseCount > 0, "the export holds the indices");
            Assert.True(column.Validity!.Handle.LeaseCount > 0, "the export holds the bitmap");
            Assert.True(column.Dictionary.Data.Handle.LeaseCount > 0, "the export holds the dictionary's data");
            Assert.Throws<InvalidOperationException>(column.Dispose);
            Assert.True(column.Indices.IsValid);

            CConsumer.DictionaryResult seen = CConsumer.ReadDictionary(schema, array, column.Indices.Pointer + (ChunkRows * sizeof(int)));
            (long bytes, uint hash) = Summary(values[ChunkRows..(2 * ChunkRows)]);
            Assert.Equal(1, seen.ZeroCopy);
            Assert.Equal(1, seen.Released);
            Assert.Equal(ChunkRows, seen.Length);
            Assert.Equal(bytes, seen.Bytes);
            Assert.Equal(hash, seen.Hash);

            // The C program's release gave back everything: the column may go.
            Assert.Equal(0, column.Indices.Handle.LeaseCount);
            Assert.Equal(0, column.Validity.Handle.LeaseCount);
            Assert.Equal(0, column.Dictionary.Data.Handle.LeaseCount);
            column.Dispose();
            Assert.False(column.Indices.IsValid);
        }
        finally
        {
            CArrowArray.Free(array);
            CArrowSchema.Free(schema);
            if (column.Indices.IsValid && column.Indices.Handle.LeaseCount == 0)
            {
                column.Dispose();
            }
        }
    }

    [LinuxOnlyFact(Gcc)]
    public void An_index_written_past_the_dictionary_after_the_export_is_reported_by_the_C_program_not_read()
    {
        string?[] values = Categories(Rows);
        using NativeDictionaryColumn column = TestColumns.Dictionary(values);
        using NativeArrowColumn view = column.ToArrow(largeOffsets: false, ChunkRows);
        int heldIndices = column.Indices.Handle.LeaseCount;
        int limit = (int)column.Dictionary.Length;
        foreach ((int chunk, int row, int forged) in new[] { (1, ChunkRows + 1, limit), (2, (2 * ChunkRows) + 2, -1), (0, 7, int.MaxValue) })
        {
            Assert.NotNull(values[row]);
            CArrowArray* array = CArrowArray.Create();
            CArrowSchema* schema = CArrowSchema.Create();
            int original = column.Indices[row];
            try
            {
                CArrowSchemaExporter.ExportType(view.DataType, schema);
                view.ExportChunk(chunk, array);

                // What the documentation says the caller must not do while an export is open: Arrow's
                // view checked the indices when it was made, the C program must check them again.
                column.Indices[row] = forged;
                int status = CConsumer.TryReadDictionary(schema, array, view.GetValueAddress(chunk), out CConsumer.DictionaryResult seen);
                Assert.Equal(1, status);
                Assert.Contains($"row {row - (chunk * ChunkRows)}'s index {forged} names no value of the dictionary's {limit}", seen.ErrorText(), StringComparison.Ordinal);
                Assert.Equal(1, seen.Released);
            }
            finally
            {
                column.Indices[row] = original;
                CArrowArray.Free(array);
                CArrowSchema.Free(schema);
            }
        }

        // A null row's index is not read, whatever it is.
        column.Indices[5] = int.MinValue;
        CConsumer.DictionaryResult first = ExportAndRead(view, 0, column);
        Assert.Equal(Summary(values[..ChunkRows]).Hash, first.Hash);
        Assert.Equal(heldIndices, column.Indices.Handle.LeaseCount);
    }

    [LinuxOnlyFact(Gcc)]
    public void The_C_program_honours_the_offsets_of_a_sliced_export_and_of_its_dictionary()
    {
        string?[] values = Categories(Rows);
        using NativeDictionaryColumn column = TestColumns.Dictionary(values);
        using (NativeArrowColumn view = column.ToArrow())
        {
            // A slice at row 13: its bitmap starts inside a byte, its index buffer is still the column's block.
            IArrowArray slice = ((Apache.Arrow.Array)view.Array).Slice(13, 1_000);
            CConsumer.DictionaryResult seen = ExportArrayAndRead(slice, column.Indices.Pointer);
            (long bytes, uint hash) = Summary(values[13..1_013]);
            Assert.Equal(1, seen.ZeroCopy);
            Assert.Equal(1_000, seen.Length);
            Assert.Equal(values[13..1_013].Count(v => v is null), seen.NullCount);
            Assert.Equal(bytes, seen.Bytes);
            Assert.Equal(hash, seen.Hash);
        }

        // A dictionary sliced past its first value, with a null value, under sliced indices.
        using StringArray dictionary = new StringArray.Builder().Append("never read").Append("ä").Append(string.Empty).AppendNull().Append("zz").Build();
        using Int32Array indices = new Int32Array.Builder().Append(3).Append(0).AppendNull().Append(3).Append(2).Append(1).Append(0).Build();
        var type = new DictionaryType(Int32Type.Default, StringType.Default, true);
        using var forged = new DictionaryArray(type, indices.Slice(1, 6), dictionary.Slice(1, 4));
        CConsumer.DictionaryResult read = ExportArrayAndRead(forged, 0);
        (long expectedBytes, uint expectedHash) = Summary(["ä", null, "zz", null, string.Empty, "ä"]);
        Assert.Equal(6, read.Length);
        Assert.Equal(1, read.NullCount);
        Assert.Equal(1, read.NullValueRows);
        Assert.Equal(4, read.DictionaryLength);
        Assert.Equal(1, read.Ordered);
        Assert.Equal(expectedBytes, read.Bytes);
        Assert.Equal(expectedHash, read.Hash);
        Assert.Equal(0, column.Indices.Handle.LeaseCount);
    }

    [LinuxOnlyTheory(Gcc)]
    [InlineData("index format", "the index format l is not int32 (i)")]
    [InlineData("no dictionary", "names its value type in dictionary; it has none")]
    [InlineData("value format", "the dictionary's format l is no string or binary format")]
    [InlineData("map keys sorted", "the index schema's flags 6 are not dictionary-ordered and nullable")]
    [InlineData("ordered values", "the value schema's flags 3")]
    [InlineData("index buffers", "the indices have 3 buffers")]
    [InlineData("dictionary buffers", "the dictionary has 2 buffers")]
    [InlineData("negative offset", "the indices' length or offset is negative")]
    [InlineData("nulls without a bitmap", "the indices have nulls and no validity bitmap")]
    [InlineData("released", "released already")]
    public void A_schema_or_array_that_is_no_dictionary_of_strings_is_refused_and_still_released(string forgery, string error)
    {
        using NativeDictionaryColumn column = TestColumns.Dictionary(Categories(1_000));
        using (NativeArrowColumn view = column.ToArrow())
        {
            CArrowArray* array = CArrowArray.Create();
            CArrowSchema* schema = CArrowSchema.Create();
            try
            {
                IArrowType exportedType = forgery switch
                {
                    "index format" => new DictionaryType(Int64Type.Default, StringType.Default, false),
                    "no dictionary" => Int32Type.Default,
                    "value format" => new DictionaryType(Int32Type.Default, Int64Type.Default, false),
                    _ => view.DataType,
                };
                CArrowSchemaExporter.ExportType(exportedType, schema);
                if (forgery != "released")
                {
                    view.ExportChunk(0, array);
                }

                // Fields the producers' release callbacks do not read: changing them leaks nothing.
                switch (forgery)
                {
                    case "map keys sorted":
                        schema->flags |= CArrowSchema.ArrowFlagMapKeysSorted;
                        break;
                    case "ordered values":
                        schema->dictionary->flags |= CArrowSchema.ArrowFlagDictionaryOrdered;
                        break;
                    case "index buffers":
                        array->n_buffers = 3;
                        break;
                    case "dictionary buffers":
                        array->dictionary->n_buffers = 2;
                        break;
                    case "negative offset":
                        array->offset = -1;
                        break;
                    case "nulls without a bitmap":
                        array->buffers[0] = null;
                        break;
                }

                int status = CConsumer.TryReadDictionary(schema, array, column.Indices.Pointer, out CConsumer.DictionaryResult seen);
                Assert.Equal(1, status);
                Assert.Contains(error, seen.ErrorText(), StringComparison.Ordinal);
                Assert.Equal(forgery == "released" ? 0 : 1, seen.Released);
            }
            finally
            {
                // In the "released" case the C program refused before releasing: Free releases the schema.
                CArrowArray.Free(array);
                CArrowSchema.Free(schema);
            }
        }

        Assert.Equal(0, column.Indices.Handle.LeaseCount);
        Assert.Equal(0, column.Dictionary.Data.Handle.LeaseCount);
    }

    [LinuxOnlyFact(Gcc)]
    public void A_dictionary_whose_offsets_disagree_is_refused_before_a_row_is_read()
    {
        // The C Data Interface gives no buffer sizes: a consumer can only check that the offsets agree.
        using ArrowBuffer offsets = new ArrowBuffer.Builder<int>().Append(0).Append(3).Append(2).Build();
        using ArrowBuffer data = new ArrowBuffer.Builder<byte>().Append(65).Append(66).Append(67).Append(68).Build();
        using var dictionary = new StringArray(new ArrayData(StringType.Default, 2, 0, 0, [ArrowBuffer.Empty, offsets, data]));
        using Int32Array indices = new Int32Array.Builder().Append(0).Append(1).Build();
        using var forged = new DictionaryArray(new DictionaryType(Int32Type.Default, StringType.Default, false), indices, dictionary);
        CArrowArray* array = CArrowArray.Create();
        CArrowSchema* schema = CArrowSchema.Create();
        try
        {
            CArrowSchemaExporter.ExportType(forged.Data.DataType, schema);
            CArrowArrayExporter.ExportArray(forged, array);
            int status = CConsumer.TryReadDictionary(schema, array, 0, out CConsumer.DictionaryResult seen);
            Assert.Equal(1, status);
            Assert.Contains("dictionary value 0's offsets leave the data", seen.ErrorText(), StringComparison.Ordinal);
            Assert.Equal(1, seen.Released);
        }
        finally
        {
            CArrowArray.Free(array);
            CArrowSchema.Free(schema);
        }
    }

    // Exports one chunk (and its type) into structures the consumer owns, has the C program read and
    // release them, and checks that the release left the indices held as they were before the export.
    private static CConsumer.DictionaryResult ExportAndRead(NativeArrowColumn view, int chunk, NativeDictionaryColumn column)
    {
        CArrowArray* array = CArrowArray.Create();
        CArrowSchema* schema = CArrowSchema.Create();
        try
        {
            // The view holds the indices once however many of its buffers are pinned: the count stays.
            int held = column.Indices.Handle.LeaseCount;
            CArrowSchemaExporter.ExportType(view.DataType, schema);
            view.ExportChunk(chunk, array);
            Assert.True(column.Indices.Handle.LeaseCount > 0, "the view or the export holds the indices");
            CConsumer.DictionaryResult seen = CConsumer.ReadDictionary(schema, array, view.GetValueAddress(chunk));
            Assert.Equal(held, column.Indices.Handle.LeaseCount);
            return seen;
        }
        finally
        {
            CArrowArray.Free(array);
            CArrowSchema.Free(schema);
        }
    }

    // Exports an Arrow dictionary array made here (a slice, or one built by hand) and has the C program read it.
    private static CConsumer.DictionaryResult ExportArrayAndRead(IArrowArray dictionaryArray, nint expectedIndices)
    {
        CArrowArray* array = CArrowArray.Create();
        CArrowSchema* schema = CArrowSchema.Create();
        try
        {
            CArrowSchemaExporter.ExportType(dictionaryArray.Data.DataType, schema);
            CArrowArrayExporter.ExportArray(dictionaryArray, array);
            CConsumer.DictionaryResult seen = CConsumer.ReadDictionary(schema, array, expectedIndices);
            Assert.Equal(1, seen.Released);
            return seen;
        }
        finally
        {
            CArrowArray.Free(array);
            CArrowSchema.Free(schema);
        }
    }
}
