using System.Buffers.Binary;
using Apache.Arrow;
using Apache.Arrow.Ipc;
using Apache.Arrow.Types;
using jemalloc.Arrow.Ipc;

namespace jemalloc.Arrow.Tests;

/// <summary>
/// A file's footer lists each block of the file once: a footer that lists a batch again, or blocks
/// that overlap, would make a small file read as a huge one (rows and allocations counted once per
/// listing), so it is refused when the reader opens, naming the blocks (and the file). Footers that
/// list disjoint blocks, in any order, read.
/// </summary>
public sealed class IpcFooterBlockTests : LedgerBalanced
{
    private const int Rows = 131_072;

    [Fact]
    public void A_footer_listing_an_Apache_Arrow_file_s_one_batch_100_times_is_refused_on_open_naming_the_blocks_and_the_file()
    {
        byte[] file = ApacheArrowFile();
        Block block = Blocks(file, 3).Single();
        byte[] forged = WithFooter(file, [], Enumerable.Repeat(block, 100).ToArray());
        Assert.True(forged.Length < 1_100_000, $"{forged.Length:N0} bytes");

        var refused = Assert.Throws<InvalidDataException>(() => new ArrowIpcReader(new MemoryStream(forged)).Dispose());
        Assert.Contains("record batch 0 of the file", refused.Message, StringComparison.Ordinal);
        Assert.Contains("record batch 1 of the file", refused.Message, StringComparison.Ordinal);
        Assert.Contains("overlap", refused.Message, StringComparison.Ordinal);
        Assert.Contains($"bytes {block.Offset:N0} to", refused.Message, StringComparison.Ordinal);

        string path = Path.Combine(Path.GetTempPath(), "jemalloc-footer-" + Guid.NewGuid().ToString("N") + ".arrow");
        File.WriteAllBytes(path, forged);
        try
        {
            var named = Assert.Throws<InvalidDataException>(() => new ArrowIpcReader(path).Dispose());
            Assert.Contains(path, named.Message, StringComparison.Ordinal);
            Assert.Contains("overlap", named.Message, StringComparison.Ordinal);
        }
        finally
        {
            File.Delete(path);
        }

        // The file as written reads, its one batch once.
        using var reader = new ArrowIpcReader(new MemoryStream(file));
        Assert.Equal(Rows, reader.RowCount);
        using HugeArray<long> values = reader.ReadColumn<long>("a");
        Assert.Equal(Rows - 1L, values[Rows - 1]);
    }

    [Fact]
    public void Blocks_that_overlap_in_part_or_across_dictionaries_and_batches_are_refused()
    {
        byte[] file = OwnFile(batches: 3);
        Block[] blocks = Blocks(file, 3);
        Assert.Equal(3, blocks.Length);

        // A fourth entry from inside batch 1's message to inside batch 2's.
        Block straddling = new(blocks[1].Offset + 8, blocks[1].MetadataLength, blocks[1].BodyLength);
        var partly = Assert.Throws<InvalidDataException>(() => new ArrowIpcReader(new MemoryStream(WithFooter(file, [], [.. blocks, straddling]))).Dispose());
        Assert.Contains("record batch 1 of the file", partly.Message, StringComparison.Ordinal);
        Assert.Contains("record batch 3 of the file", partly.Message, StringComparison.Ordinal);

        // A record batch's block listed as a dictionary batch too.
        var across = Assert.Throws<InvalidDataException>(() => new ArrowIpcReader(new MemoryStream(WithFooter(file, [blocks[2]], blocks))).Dispose());
        Assert.Contains("dictionary batch 0 of the file", across.Message, StringComparison.Ordinal);
        Assert.Contains("record batch 2 of the file", across.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_footer_of_disjoint_blocks_reads_in_the_order_it_lists_them()
    {
        byte[] file = OwnFile(batches: 3);
        Block[] blocks = Blocks(file, 3);
        using (var reader = new ArrowIpcReader(new MemoryStream(file)))
        {
            Assert.Equal(3, reader.BatchCount);
            using HugeArray<long> values = reader.ReadColumn<long>("a");
            Assert.Equal(Rows, values.Length);
            Assert.Equal(Rows - 1L, values[Rows - 1]);
        }

        // Listed last to first: disjoint, so read, the batches in the footer's order.
        using (var reversed = new ArrowIpcReader(new MemoryStream(WithFooter(file, [], [blocks[2], blocks[1], blocks[0]]))))
        {
            Assert.Equal(Rows, reversed.RowCount);
            using HugeArray<long> values = reversed.ReadColumn<long>("a");
            long batch = BatchOf(3);
            long last = Rows - (2 * batch);
            Assert.Equal(2 * batch, values[0]);
            Assert.Equal(Rows - 1L, values[last - 1]);
            Assert.Equal(batch, values[last]);
            Assert.Equal(0L, values[Rows - batch]);
            Assert.Equal(batch - 1, values[Rows - 1]);
        }
    }

    private static long BatchOf(int batches) => (Rows / batches + 7) & ~7L;

    private static byte[] ApacheArrowFile()
    {
        var schema = new Schema.Builder().Field(new Field("a", Int64Type.Default, nullable: false)).Build();
        var builder = new Int64Array.Builder();
        for (int i = 0; i < Rows; i++)
        {
            builder.Append(i);
        }

        var output = new MemoryStream();
        using (var writer = new ArrowFileWriter(output, schema, leaveOpen: true))
        {
            writer.WriteRecordBatch(new RecordBatch(schema, [builder.Build()], Rows));
            writer.WriteEnd();
        }

        return output.ToArray();
    }

    private static byte[] OwnFile(int batches)
    {
        using var values = new HugeArray<long>(Rows);
        for (int i = 0; i < Rows; i++)
        {
            values[i] = i;
        }

        var output = new MemoryStream();
        new ArrowIpcWriter { BatchSize = BatchOf(batches) }.Add("a", values).Write(output);
        return output.ToArray();
    }

    // The blocks of the footer's vector `slot` (2: dictionaries, 3: record batches).
    private static Block[] Blocks(byte[] file, int slot)
    {
        int footerLength = BinaryPrimitives.ReadInt32LittleEndian(file.AsSpan(file.Length - 10));
        byte[] footer = file.AsSpan(file.Length - 10 - footerLength, footerLength).ToArray();
        FlatVector blocks = new FlatBuffer(footer, footerLength, "footer").Root("root").GetVector(slot, 24, "blocks");
        return [.. Enumerable.Range(0, blocks.Count).Select(b => new Block(blocks.Int64At(b, 0, "offset"), blocks.Int32At(b, 8, "metadata"), blocks.Int64At(b, 16, "body")))];
    }

    // The file up to its footer, then a footer of the one-column schema listing `dictionaries` and `batches`.
    private static byte[] WithFooter(byte[] file, Block[] dictionaries, Block[] batches)
    {
        int footerLength = BinaryPrimitives.ReadInt32LittleEndian(file.AsSpan(file.Length - 10));
        int footerStart = file.Length - 10 - footerLength;
        FlatObject footer = FlatObject.Table()
            .Scalar(0, 2, 4)
            .Reference(1, IpcSchema.Write([("a", IpcType.Of<long>(), false)], bigEndian: false))
            .Reference(2, FlatObject.Structs(Bytes(dictionaries), dictionaries.Length, 8))
            .Reference(3, FlatObject.Structs(Bytes(batches), batches.Length, 8));
        byte[] footerBytes = FlatBufferBuilder.Build(footer);
        byte[] forged = new byte[footerStart + footerBytes.Length + 10];
        file.AsSpan(0, footerStart).CopyTo(forged);
        footerBytes.CopyTo(forged, footerStart);
        BinaryPrimitives.WriteInt32LittleEndian(forged.AsSpan(footerStart + footerBytes.Length), footerBytes.Length);
        "ARROW1"u8.CopyTo(forged.AsSpan(forged.Length - 6));
        return forged;
    }

    private static byte[] Bytes(Block[] blocks)
    {
        byte[] bytes = new byte[24 * blocks.Length];
        for (int b = 0; b < blocks.Length; b++)
        {
            BinaryPrimitives.WriteInt64LittleEndian(bytes.AsSpan(24 * b), blocks[b].Offset);
            BinaryPrimitives.WriteInt32LittleEndian(bytes.AsSpan((24 * b) + 8), blocks[b].MetadataLength);
            BinaryPrimitives.WriteInt64LittleEndian(bytes.AsSpan((24 * b) + 16), blocks[b].BodyLength);
        }

        return bytes;
    }

    private readonly record struct Block(long Offset, int MetadataLength, long BodyLength);
}
