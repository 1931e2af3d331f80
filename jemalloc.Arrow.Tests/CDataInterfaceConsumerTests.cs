using Apache.Arrow.C;
using jemalloc.Tests.Support;

namespace jemalloc.Arrow.Tests;

/// <summary>
/// A compiled C program (native/read_export.c) reads native columns through the Arrow C Data
/// Interface export: the buffers it reads are the columns themselves, its sums and null counts
/// match the ones computed here, and its release callbacks give back exactly what the export held.
/// </summary>
public sealed unsafe class CDataInterfaceConsumerTests
{
    private const int Rows = 100_003;

    [LinuxOnlyFact]
    public void A_C_program_sums_exported_int64_with_nulls_and_double_columns_in_place_and_releases_them()
    {
        using var longs = new HugeArray<long>(Rows);
        using var validity = new HugeArray<byte>((Rows + 7) / 8);
        using var doubles = new HugeArray<double>(Rows);
        long expectedSum = 0, expectedNulls = 0;
        double expectedDoubleSum = 0;
        for (int i = 0; i < Rows; i++)
        {
            longs[i] = (i * 3L) - 1000;
            doubles[i] = i * 0.25;
            expectedDoubleSum += doubles[i];
            if (i % 7 == 3)
            {
                expectedNulls++;
            }
            else
            {
                validity[i >> 3] |= (byte)(1 << (i & 7));
                expectedSum += longs[i];
            }
        }

        using (NativeArrowColumn column = longs.ToArrow(validity, maxChunkLength: 40_000))
        {
            Assert.Equal(3, column.ChunkCount);
            long sum = 0, nulls = 0, rows = 0;
            for (int c = 0; c < column.ChunkCount; c++)
            {
                CConsumer.Result seen = ExportAndRead(column, c, longs, validity);
                Assert.Equal("l", seen.FormatText());
                Assert.Equal(Math.Min(40_000, Rows - rows), seen.Length);
                Assert.Equal(longs.Pointer + (rows * sizeof(long)), seen.ValuesAddress);
                Assert.Equal(validity.Pointer + (rows / 8), seen.ValidityAddress);
                Assert.Equal(seen.DeclaredNullCount, seen.NullCount);
                sum += seen.IntSum;
                nulls += seen.NullCount;
                rows += seen.Length;
            }

            Assert.Equal(Rows, rows);
            Assert.Equal(expectedNulls, nulls);
            Assert.Equal(expectedSum, sum);
        }

        using (NativeArrowColumn column = doubles.ToArrow())
        {
            CConsumer.Result seen = ExportAndRead(column, 0, doubles, validity: null);
            Assert.Equal("g", seen.FormatText());
            Assert.Equal(Rows, seen.Length);
            Assert.Equal(doubles.Pointer, seen.ValuesAddress);
            Assert.Equal(0, seen.NullCount);
            Assert.Equal(0, seen.DeclaredNullCount);
            Assert.Equal(expectedDoubleSum, seen.DoubleSum);
        }

        Assert.Equal(0, longs.Handle.LeaseCount);
        Assert.Equal(0, validity.Handle.LeaseCount);
        Assert.Equal(0, doubles.Handle.LeaseCount);
    }

    [LinuxOnlyFact]
    public void An_export_keeps_the_column_after_its_view_is_disposed_until_the_C_program_releases_it()
    {
        var values = new HugeArray<long>(Rows);
        long expected = 0;
        for (int i = 0; i < Rows; i++)
        {
            values[i] = i - 5000;
            expected += i - 5000;
        }

        CArrowArray* array = CArrowArray.Create();
        CArrowSchema* schema = CArrowSchema.Create();
        try
        {
            NativeArrowColumn column = values.ToArrow();
            CArrowSchemaExporter.ExportType(column.DataType, schema);
            column.ExportChunk(0, array);
            column.Dispose();
            Assert.Throws<ObjectDisposedException>(() => column.ExportChunk(0, array));

            // Only the export holds the column now: disposing it is refused, and the memory stays the column's.
            Assert.True(values.Handle.LeaseCount > 0);
            Assert.Throws<InvalidOperationException>(values.Dispose);
            Assert.True(values.IsValid);

            CConsumer.Result seen = CConsumer.Read(schema, array, values.Pointer);
            Assert.Equal(1, seen.ZeroCopy);
            Assert.Equal(1, seen.Released);
            Assert.Equal(expected, seen.IntSum);

            // The C program's release gave back exactly what the export held: the column may go.
            Assert.Equal(0, values.Handle.LeaseCount);
            values.Dispose();
            Assert.False(values.IsValid);
        }
        finally
        {
            CArrowArray.Free(array);
            CArrowSchema.Free(schema);
        }
    }

    // Exports one chunk (and its type) into structures the consumer owns, has the C program read and
    // release them, and checks that the export held the columns until then and not after.
    private static CConsumer.Result ExportAndRead<T>(NativeArrowColumn column, int chunk, HugeArray<T> values, HugeArray<byte>? validity)
        where T : unmanaged, IEquatable<T>
    {
        int heldValues = values.Handle.LeaseCount;
        int heldValidity = validity?.Handle.LeaseCount ?? 0;
        CArrowArray* array = CArrowArray.Create();
        CArrowSchema* schema = CArrowSchema.Create();
        try
        {
            CArrowSchemaExporter.ExportType(column.DataType, schema);
            column.ExportChunk(chunk, array);
            Assert.True(values.Handle.LeaseCount > 0, "the export holds the values");
            if (validity is not null)
            {
                Assert.True(validity.Handle.LeaseCount > 0, "the export holds the bitmap");
            }

            CConsumer.Result seen = CConsumer.Read(schema, array, column.GetValueAddress(chunk));
            Assert.Equal(1, seen.ZeroCopy);
            Assert.Equal(1, seen.Released);
            Assert.Equal(heldValues, values.Handle.LeaseCount);
            Assert.Equal(heldValidity, validity?.Handle.LeaseCount ?? 0);
            return seen;
        }
        finally
        {
            CArrowArray.Free(array);
            CArrowSchema.Free(schema);
        }
    }
}
