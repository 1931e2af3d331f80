using Apache.Arrow;
using Apache.Arrow.Ipc;
using Apache.Arrow.Types;

namespace jemalloc.Arrow.Tests;

/// <summary>Arrow IPC between native columns and Apache Arrow for JavaScript, both ways, checked by sums.</summary>
public sealed class NodeInteropTests : IDisposable
{
    private const int Rows = 100_003;
    private readonly string _folder = Path.Combine(Path.GetTempPath(), "jemalloc-arrow-tests-" + Guid.NewGuid().ToString("N"));

    public NodeInteropTests() => Directory.CreateDirectory(_folder);

    public void Dispose() => Directory.Delete(_folder, recursive: true);

    [Theory]
    [InlineData("file")]
    [InlineData("stream")]
    public void Node_reads_IPC_written_from_native_columns_with_the_same_sums_and_nulls(string format)
    {
        using var id = new HugeArray<long>(Rows);
        using var x = new HugeArray<double>(Rows);
        using var xValid = new HugeArray<byte>((Rows + 7) / 8);
        using var n = new SafeArray<int>(Rows);
        long expectedId = 0, expectedN = 0, expectedNulls = 0;
        double expectedX = 0;
        for (int i = 0; i < Rows; i++)
        {
            id[i] = (i * 3L) - 7;
            expectedId += (i * 3L) - 7;
            n[i] = (i % 1000) - 500;
            expectedN += (i % 1000) - 500;
            if (i % 7 == 0)
            {
                x[i] = 999_999; // a null row's value: must not count
                expectedNulls++;
            }
            else
            {
                x[i] = i * 0.5;
                xValid[i >> 3] |= (byte)(1 << (i & 7));
                expectedX += i * 0.5;
            }
        }

        string path = Path.Combine(_folder, $"native.{format}.arrow");
        using (NativeArrowColumn idColumn = id.ToArrow())
        using (NativeArrowColumn xColumn = x.ToArrow(xValid))
        using (NativeArrowColumn nColumn = n.ToArrow())
        {
            var schema = new Schema.Builder()
                .Field(f => f.Name("id").DataType(Int64Type.Default).Nullable(false))
                .Field(f => f.Name("x").DataType(DoubleType.Default).Nullable(true))
                .Field(f => f.Name("n").DataType(Int32Type.Default).Nullable(false))
                .Build();
            var batch = new RecordBatch(schema, [idColumn.Array, xColumn.Array, nColumn.Array], Rows);
            using FileStream stream = File.Create(path);
            using ArrowStreamWriter writer = format == "file" ? new ArrowFileWriter(stream, schema) : new ArrowStreamWriter(stream, schema);
            writer.WriteRecordBatch(batch);
            writer.WriteEnd();
        }

        Dictionary<string, NodeArrow.ColumnSummary> node = NodeArrow.Read(path);
        Assert.Equal(new NodeArrow.ColumnSummary("Int64", Rows, 0, expectedId.ToString(System.Globalization.CultureInfo.InvariantCulture)), node["id"]);
        Assert.Equal(new NodeArrow.ColumnSummary("Float64", Rows, expectedNulls, expectedX.ToString(System.Globalization.CultureInfo.InvariantCulture)), node["x"]);
        Assert.Equal(new NodeArrow.ColumnSummary("Int32", Rows, 0, expectedN.ToString(System.Globalization.CultureInfo.InvariantCulture)), node["n"]);
    }

    [Fact]
    public async Task IPC_Node_wrote_copies_into_native_columns_element_by_element()
    {
        string path = Path.Combine(_folder, "node.copy.arrow");
        NodeArrow.Run("write", path, "file", Rows.ToString(System.Globalization.CultureInfo.InvariantCulture));
        await using FileStream stream = File.OpenRead(path);
        using var reader = new ArrowFileReader(stream);
        var ids = new List<IArrowArray>();
        var xs = new List<IArrowArray>();
        var batches = new List<RecordBatch>();
        while (await reader.ReadNextRecordBatchAsync() is RecordBatch batch)
        {
            batches.Add(batch);
            ids.Add(batch.Column("id"));
            xs.Add(batch.Column("x"));
        }

        try
        {
            var xColumn = new ChunkedArray(xs);
            Assert.Throws<InvalidOperationException>(() => xColumn.ToHugeArray<double>(AllocationOptions.Default));
            Assert.Throws<ArgumentException>(() => xColumn.ToHugeArray<long>(AllocationOptions.Default));
            using HugeArray<long> id = new ChunkedArray(ids).ToHugeArray<long>(AllocationOptions.Default);
            using HugeArray<double> x = xColumn.ToHugeArray<double>(AllocationOptions.Default, out HugeArray<byte> xValid);
            using (xValid)
            {
                Assert.Equal(Rows, id.Length);
                for (long i = 0; i < Rows; i++)
                {
                    Assert.Equal((i * 3) - 7, id[i]);
                    bool valid = ((xValid[i >> 3] >> (int)(i & 7)) & 1) != 0;
                    Assert.Equal(i % 7 != 0, valid);
                    if (valid)
                    {
                        Assert.Equal(i * 0.5, x[i]);
                    }
                }
            }
        }
        finally
        {
            foreach (RecordBatch batch in batches)
            {
                batch.Dispose();
            }
        }
    }

    [Theory]
    [InlineData("file")]
    [InlineData("stream")]
    public async Task IPC_Node_wrote_is_read_into_native_buffers_with_the_same_sums_and_nulls(string format)
    {
        string path = Path.Combine(_folder, $"node.{format}.arrow");
        NodeArrow.Run("write", path, format, Rows.ToString(System.Globalization.CultureInfo.InvariantCulture));

        using var arena = new JemArena();
        var allocator = new JemallocArrowAllocator(arena.Options);
        long idSum = 0, nSum = 0, nulls = 0, rows = 0;
        double xSum = 0;
        await using (FileStream stream = File.OpenRead(path))
        {
            using ArrowStreamReader reader = format == "file" ? new ArrowFileReader(stream, allocator) : new ArrowStreamReader(stream, allocator);
            while (await reader.ReadNextRecordBatchAsync() is RecordBatch batch)
            {
                using (batch)
                {
                    // The batch's buffers were read into native blocks of the arena.
                    Assert.True(arena.UsedBytes > 0);
                    var id = (Int64Array)batch.Column("id");
                    var x = (DoubleArray)batch.Column("x");
                    var n = (Int32Array)batch.Column("n");
                    for (int i = 0; i < batch.Length; i++)
                    {
                        idSum += id.GetValue(i)!.Value;
                        nSum += n.GetValue(i)!.Value;
                        if (x.IsNull(i))
                        {
                            nulls++;
                        }
                        else
                        {
                            xSum += x.GetValue(i)!.Value;
                        }
                    }

                    rows += batch.Length;
                }
            }
        }

        long expectedId = 0, expectedN = 0, expectedNulls = 0;
        double expectedX = 0;
        for (long i = 0; i < Rows; i++)
        {
            expectedId += (i * 3) - 7;
            expectedN += (i % 1000) - 500;
            if (i % 7 == 0)
            {
                expectedNulls++;
            }
            else
            {
                expectedX += i * 0.5;
            }
        }

        Assert.Equal(Rows, rows);
        Assert.Equal(expectedId, idSum);
        Assert.Equal(expectedN, nSum);
        Assert.Equal(expectedNulls, nulls);
        Assert.Equal(expectedX, xSum);
    }
}
