using Apache.Arrow;
using Apache.Arrow.C;
using jemalloc.Tests.Support;

namespace jemalloc.Arrow.Tests;

/// <summary>
/// A binary column whose values take more than 2 GiB, past one Arrow buffer: several chunks over the
/// one data block, each chunk's data buffer at its first value and its offsets rebased to it, with
/// 64-bit and with 32-bit offsets; the second chunk exported through the C Data Interface in place. Only
/// the first and last byte of each value are written and checked, so most pages are never touched.
/// </summary>
public sealed unsafe class PastTwoGigabytesOfStringsTests
{
    private const int ValueBytes = 1 << 20;
    private const int Rows = 2400; // 2,400 MiB of values

    [LinuxOnlyFact]
    public void A_column_of_more_than_2_GiB_of_values_is_chunks_over_its_one_data_block()
    {
        var offsets = new HugeArray<long>(Rows + 1);
        var data = new HugeArray<byte>((long)Rows * ValueBytes);
        var validity = new HugeArray<byte>((Rows + 7) / 8, (byte)0xFF);
        for (int row = 0; row <= Rows; row++)
        {
            offsets[row] = (long)row * ValueBytes;
        }

        for (int row = 0; row < Rows; row++)
        {
            data[(long)row * ValueBytes] = (byte)row;
            data[((long)row * ValueBytes) + ValueBytes - 1] = (byte)(row * 7);
            if (row % 7 == 3)
            {
                validity[row >> 3] &= (byte)~(1 << (row & 7));
            }
        }

        using var column = new NativeStringColumn(offsets, data, validity, Rows, isUtf8: false);
        Assert.Equal((long)Rows * ValueBytes, column.ByteCount);
        foreach (bool large in new[] { true, false })
        {
            using NativeArrowColumn view = column.ToArrow(large);
            Assert.Equal(2, view.ChunkCount);
            Assert.Equal(Rows, view.Length);
            Assert.Equal(Enumerable.Range(0, Rows).Count(r => r % 7 == 3), view.NullCount);
            long row = 0;
            for (int c = 0; c < view.ChunkCount; c++)
            {
                IArrowArray chunk = view.Chunks.ArrowArray(c);
                Assert.Equal(0, row % 8);
                Assert.Equal(data.Pointer + (nint)(row * ValueBytes), view.GetValueAddress(c));
                Assert.True((long)chunk.Length * ValueBytes <= int.MaxValue);
                for (int i = 0; i < chunk.Length; i++, row++)
                {
                    ReadOnlySpan<byte> value = large ? ((LargeBinaryArray)chunk).GetBytes(i) : ((BinaryArray)chunk).GetBytes(i);
                    if (row % 7 == 3)
                    {
                        Assert.True(chunk.IsNull(i));
                        continue;
                    }

                    Assert.Equal(ValueBytes, value.Length);
                    Assert.Equal((byte)row, value[0]);
                    Assert.Equal((byte)(row * 7), value[^1]);
                }
            }

            Assert.Equal(Rows, row);
        }

        using (NativeArrowColumn view = column.ToArrow())
        {
            int first = view.Chunks.ArrowArray(0).Length;
            CArrowArray* array = CArrowArray.Create();
            CArrowSchema* schema = CArrowSchema.Create();
            try
            {
                CArrowSchemaExporter.ExportType(view.DataType, schema);
                view.ExportChunk(1, array);
                CConsumer.StringResult seen = CConsumer.ReadStrings(schema, array, data.Pointer + (nint)((long)first * ValueBytes));
                Assert.Equal("Z", seen.FormatText());
                Assert.Equal(1, seen.ZeroCopy);
                Assert.Equal(Rows - first, seen.Length);
                Assert.Equal(Enumerable.Range(first, Rows - first).Count(r => r % 7 == 3), seen.NullCount);
                Assert.Equal((long)(Rows - first - seen.NullCount) * ValueBytes, seen.Bytes);
            }
            finally
            {
                CArrowArray.Free(array);
                CArrowSchema.Free(schema);
            }
        }

        Assert.Equal(0, data.Handle.LeaseCount);
    }
}
