using Apache.Arrow;
using Apache.Arrow.C;

namespace jemalloc.Arrow.Tests;

/// <summary>
/// A byte column of more than 2^31 elements, past what one Arrow array can index: a chunked array
/// over the one native block, each chunk's value and validity buffers at their place in it, and the
/// chunk past 2^31 exported through the C Data Interface without a copy. The values are only
/// touched where they are checked; the 256 MiB bitmap is written whole.
/// </summary>
public sealed unsafe class PastTwoBillionElementsTests
{
    private const long Boundary = 1L << 31;
    private const long Rows = Boundary + 1000;
    private const int ChunkRows = 1 << 30; // the default: 1 GiB of bytes

    [Fact]
    public void A_nullable_byte_column_of_more_than_2_pow_31_elements_is_three_chunks_over_its_blocks()
    {
        using var values = new HugeArray<byte>(Rows);
        using var validity = new HugeArray<byte>((Rows + 7) / 8, (byte)0xFF);
        long[] nullRows = [5, ChunkRows, Boundary - 8, Boundary, Rows - 1];
        foreach (long row in nullRows)
        {
            validity[row >> 3] &= (byte)~(1 << (int)(row & 7));
        }

        values[0] = 1;
        values[ChunkRows - 1] = 2;
        values[ChunkRows + 1] = 3;
        values[Boundary - 1] = 4;
        values[Boundary + 1] = 5;
        values[Rows - 2] = 6;

        using NativeArrowColumn column = values.ToArrow(validity);
        Assert.Equal(3, column.ChunkCount);
        Assert.Equal(Rows, column.Length);
        Assert.Equal(nullRows.Length, column.NullCount);
        long[] starts = [0, ChunkRows, Boundary];
        int[] lengths = [ChunkRows, ChunkRows, 1000];
        int[] nulls = [1, 2, 2];
        for (int c = 0; c < 3; c++)
        {
            var chunk = (UInt8Array)column.Chunks.ArrowArray(c);
            Assert.Equal(lengths[c], chunk.Length);
            Assert.Equal(nulls[c], chunk.NullCount);
            Assert.Equal(values.Pointer + unchecked((nint)starts[c]), column.GetValueAddress(c));
            using System.Buffers.MemoryHandle valuePin = chunk.ValueBuffer.Memory.Pin();
            using System.Buffers.MemoryHandle bitmapPin = chunk.NullBitmapBuffer.Memory.Pin();
            Assert.Equal(values.Pointer + unchecked((nint)starts[c]), (nint)valuePin.Pointer);
            Assert.Equal(validity.Pointer + (nint)(starts[c] / 8), (nint)bitmapPin.Pointer);
        }

        var first = (UInt8Array)column.Chunks.ArrowArray(0);
        var second = (UInt8Array)column.Chunks.ArrowArray(1);
        var last = (UInt8Array)column.Chunks.ArrowArray(2);
        Assert.Equal((byte)1, first.GetValue(0));
        Assert.Null(first.GetValue(5));
        Assert.Equal((byte)2, first.GetValue(ChunkRows - 1));
        Assert.Null(second.GetValue(0));
        Assert.Equal((byte)3, second.GetValue(1));
        Assert.Equal((byte)4, second.GetValue(ChunkRows - 1));
        Assert.Null(second.GetValue(ChunkRows - 8));
        Assert.Null(last.GetValue(0));
        Assert.Equal((byte)5, last.GetValue(1));
        Assert.Equal((byte)6, last.GetValue(998));
        Assert.Null(last.GetValue(999));

        // The chunk past 2^31 through the C Data Interface: its buffers are the blocks at that row.
        CArrowArray* exported = CArrowArray.Create();
        try
        {
            column.ExportChunk(2, exported);
            Assert.Equal(1000, exported->length);
            Assert.Equal(2, exported->null_count);
            Assert.Equal(0, exported->offset);
            Assert.Equal(values.Pointer + unchecked((nint)Boundary), (nint)exported->buffers[1]);
            Assert.Equal(validity.Pointer + (nint)(Boundary / 8), (nint)exported->buffers[0]);
            // The view gone, the export alone holds the structure.
            column.Dispose();
            Assert.True(values.Handle.LeaseCount > 0);
        }
        finally
        {
            // Frees the structure after calling its release callback, as a consumer would.
            CArrowArray.Free(exported);
        }

        Assert.Equal(0, values.Handle.LeaseCount);
    }
}
