using Apache.Arrow;
using Apache.Arrow.C;
using Apache.Arrow.Types;

namespace jemalloc.Arrow.Tests;

/// <summary>Native columns as Arrow arrays: the buffers are the native blocks, held while Arrow or a C consumer holds them.</summary>
public sealed unsafe class ZeroCopyTests
{
    [Fact]
    public void The_arrow_value_buffer_is_the_columns_native_block()
    {
        using var values = new HugeArray<double>(100_000);
        for (long i = 0; i < values.Length; i++)
        {
            values[i] = i * 0.5;
        }

        using NativeArrowColumn column = values.ToArrow();
        var array = (DoubleArray)column.Array;
        using (System.Buffers.MemoryHandle pin = array.ValueBuffer.Memory.Pin())
        {
            Assert.Equal(values.Pointer, (nint)pin.Pointer);
        }

        Assert.Equal(values.Pointer, column.GetValueAddress(0));
        Assert.Equal(100_000, array.Length);
        Assert.Equal(0, array.NullCount);
        double sum = 0;
        foreach (double value in array.Values)
        {
            sum += value;
        }

        Assert.Equal(0.5 * (100_000L * 99_999 / 2), sum);

        // A write through the native column is seen by Arrow: the same memory, not a copy.
        values[77] = -1;
        Assert.Equal(-1, array.GetValue(77));
    }

    [Fact]
    public void The_column_is_held_while_the_arrow_view_is_open_and_the_view_throws_once_disposed()
    {
        var values = new HugeArray<int>(1000, 3);
        NativeArrowColumn column = values.ToArrow();
        var array = (Int32Array)column.Array;
        Assert.Throws<InvalidOperationException>(values.Dispose);
        Assert.Equal(3, array.GetValue(999));
        column.Dispose();
        column.Dispose();
        Assert.Throws<ObjectDisposedException>(() => array.GetValue(999));
        values.Dispose();
        Assert.False(values.IsValid);
    }

    [Fact]
    public void A_nullable_column_in_chunks_shares_one_block_and_counts_nulls_per_chunk()
    {
        const int rows = 10_500;
        using var values = new HugeArray<long>(rows);
        using var validity = new HugeArray<byte>((rows + 7) / 8);
        long expectedSum = 0, expectedNulls = 0;
        for (int i = 0; i < rows; i++)
        {
            values[i] = i;
            if (i % 3 != 0)
            {
                validity[i >> 3] |= (byte)(1 << (i & 7));
                expectedSum += i;
            }
            else
            {
                expectedNulls++;
            }
        }

        using NativeArrowColumn column = values.ToArrow(validity, maxChunkLength: 1000);
        Assert.Equal(11, column.ChunkCount);
        Assert.Equal(rows, column.Length);
        Assert.Equal(expectedNulls, column.NullCount);
        Assert.Throws<InvalidOperationException>(() => column.Array);
        long sum = 0;
        for (int c = 0; c < column.ChunkCount; c++)
        {
            Assert.Equal(values.Pointer + (c * 1000 * sizeof(long)), column.GetValueAddress(c));
            var chunk = (Int64Array)column.Chunks.ArrowArray(c);
            for (int i = 0; i < chunk.Length; i++)
            {
                long row = (c * 1000L) + i;
                Assert.Equal(row % 3 == 0, chunk.IsNull(i));
                sum += chunk.GetValue(i) ?? 0;
            }
        }

        Assert.Equal(expectedSum, sum);
    }

    [Fact]
    public void A_column_past_2_GiB_is_chunks_of_at_most_1_GiB_over_the_one_block()
    {
        const long rows = 700_000_000; // 2.8 GB of int: more than one Arrow buffer can hold
        using var values = new HugeArray<int>(rows);
        values[0] = 11;
        values[(1L << 28) - 1] = 22;
        values[1L << 28] = 33;
        values[rows - 1] = 44;
        using NativeArrowColumn column = values.ToArrow();
        Assert.Equal(3, column.ChunkCount);
        Assert.Equal(rows, column.Length);
        long covered = 0;
        for (int c = 0; c < column.ChunkCount; c++)
        {
            var chunk = (Int32Array)column.Chunks.ArrowArray(c);
            Assert.Equal(values.Pointer + (covered * sizeof(int)), column.GetValueAddress(c));
            Assert.True((long)chunk.Length * sizeof(int) <= 1L << 30);
            covered += chunk.Length;
        }

        Assert.Equal(rows, covered);
        var first = (Int32Array)column.Chunks.ArrowArray(0);
        var second = (Int32Array)column.Chunks.ArrowArray(1);
        var last = (Int32Array)column.Chunks.ArrowArray(2);
        Assert.Equal(11, first.GetValue(0));
        Assert.Equal(22, first.GetValue(first.Length - 1));
        Assert.Equal(33, second.GetValue(0));
        Assert.Equal(44, last.GetValue(last.Length - 1));
    }

    [Fact]
    public void The_C_data_interface_exports_the_native_block_and_holds_it_until_the_consumer_releases_it()
    {
        var values = new HugeArray<double>(4096);
        for (long i = 0; i < values.Length; i++)
        {
            values[i] = i;
        }

        CArrowArray* exported = CArrowArray.Create();
        try
        {
            using (NativeArrowColumn column = values.ToArrow())
            {
                column.ExportChunk(0, exported);
            }

            // The consumer's view: its value buffer is the native block; the managed view is gone, the export still holds the column.
            Assert.Equal(4096, exported->length);
            Assert.Equal(2, exported->n_buffers);
            Assert.Equal(values.Pointer, (nint)exported->buffers[1]);
            Assert.Throws<InvalidOperationException>(values.Dispose);

            // A consumer that imports it (Arrow's importer reads the C structure, no copy) sums it.
            using (var imported = (DoubleArray)CArrowArrayImporter.ImportArray(exported, DoubleType.Default))
            {
                using (System.Buffers.MemoryHandle pin = imported.ValueBuffer.Memory.Pin())
                {
                    Assert.Equal(values.Pointer, (nint)pin.Pointer);
                }

                double sum = 0;
                foreach (double value in imported.Values)
                {
                    sum += value;
                }

                Assert.Equal(4095.0 * 4096 / 2, sum);

                // Brought into a native column of its own: a copy, in another block.
                using HugeArray<double> copy = imported.ToHugeArray<double>(AllocationOptions.Default);
                Assert.NotEqual(values.Pointer, copy.Pointer);
                Assert.Equal(4095.0 * 4096 / 2, copy.VectorSum());
            }

            // Disposing the import called the release callback: the column is free to go.
            values.Dispose();
            Assert.False(values.IsValid);
        }
        finally
        {
            CArrowArray.Free(exported);
        }
    }

    [Fact]
    public void Mistakes_raise_conventional_exceptions()
    {
        using var flags = new HugeArray<bool>(10);
        Assert.Throws<NotSupportedException>(() => flags.ToArrow());
        using var values = new HugeArray<double>(100);
        using var shortBitmap = new HugeArray<byte>(12);
        Assert.Equal("validity", Assert.Throws<ArgumentException>(() => values.ToArrow(shortBitmap)).ParamName);
        using var bitmap = new HugeArray<byte>(13);
        Assert.Equal("maxChunkLength", Assert.Throws<ArgumentException>(() => values.ToArrow(bitmap, maxChunkLength: 12)).ParamName);
        Assert.Throws<ArgumentOutOfRangeException>(() => values.ToArrow(maxChunkLength: -1));
        Assert.Throws<ArgumentOutOfRangeException>(() => values.ToArrow(maxChunkLength: int.MaxValue));
        Assert.Throws<ArgumentNullException>(() => ((HugeArray<double>)null!).ToArrow());
        var disposed = new HugeArray<double>(10);
        disposed.Dispose();
        Assert.Throws<ObjectDisposedException>(() => disposed.ToArrow());
        using NativeArrowColumn column = values.ToArrow();
        Assert.Throws<ArgumentOutOfRangeException>(() => column.GetValueAddress(1));
        Assert.Throws<ArgumentNullException>(() => column.ExportChunk(0, null));
        // A failed ToArrow holds nothing.
        Assert.Equal(1, values.Handle.LeaseCount);
    }

    [Fact]
    public void An_array_whose_declared_length_passes_its_buffers_is_refused_with_ArgumentException()
    {
        using var values = new HugeArray<int>(10, 1);
        using NativeArrowColumn column = values.ToArrow();
        ArrayData real = column.Array.Data;
        var tooLong = new ArrayData(Int32Type.Default, 11, 0, 0, [ArrowBuffer.Empty, real.Buffers[1]]);
        var pastEnd = new ArrayData(Int32Type.Default, 5, 0, 8, [ArrowBuffer.Empty, real.Buffers[1]]);
        var shortBitmap = new ArrayData(Int32Type.Default, 10, 1, 0, [new ArrowBuffer(new byte[1]), real.Buffers[1]]);
        foreach (ArrayData forged in new[] { tooLong, pastEnd })
        {
            var error = Assert.Throws<ArgumentException>(() => ArrowArrayFactory.BuildArray(forged).ToHugeArray<int>(AllocationOptions.Default));
            Assert.Contains("value buffer holds 40 bytes", error.Message, StringComparison.Ordinal);
        }

        var bitmapError = Assert.Throws<ArgumentException>(() => new ChunkedArray([ArrowArrayFactory.BuildArray(shortBitmap)]).ToHugeArray<int>(AllocationOptions.Default, out _));
        Assert.Contains("validity bitmap holds 1 bytes", bitmapError.Message, StringComparison.Ordinal);
    }
}
