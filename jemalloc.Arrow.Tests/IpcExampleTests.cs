using System.Globalization;

namespace jemalloc.Arrow.Tests;

/// <summary>The docs' Arrow IPC example (region <c>arrow-ipc</c>), run as printed: Node writes its input and reads its output.</summary>
public sealed class IpcExampleTests : IDisposable
{
    private const int Rows = 200_003;
    private readonly string _folder = Path.Combine(Path.GetTempPath(), "jemalloc-ipc-example-" + Guid.NewGuid().ToString("N"));

    public IpcExampleTests() => Directory.CreateDirectory(_folder);

    public void Dispose() => Directory.Delete(_folder, recursive: true);

    [Fact]
    public void The_docs_example_reads_Nodes_IPC_and_writes_IPC_Node_reads_with_the_same_sums()
    {
        string path = Path.Combine(_folder, "input.arrow");
        string output = Path.Combine(_folder, "output.arrows");
        NodeArrow.Run("write", path, "file", Rows.ToString(CultureInfo.InvariantCulture));
        Dictionary<string, NodeArrow.ColumnSummary> input = NodeArrow.Read(path);

        #region example: arrow-ipc
        using var reader = new ArrowIpcReader(path);        // file or stream, told by its first bytes
        using HugeArray<long> id = reader.ReadColumn<long>("id");
        using HugeArray<double> x = reader.ReadColumn<double>("x", AllocationOptions.Default, out HugeArray<byte> valid);
        using (valid)                                       // every batch in one native array, bitmaps concatenated
        {
            new ArrowIpcWriter { BatchSize = 64 * 1024 }
                .Add("id", id)
                .Add("x", x, valid)                         // nullable: written with its bitmap
                .Write(output, ArrowIpcFormat.Stream);
        }
        #endregion

        Assert.Equal(input["id"].Sum, id.VectorSum().ToString(CultureInfo.InvariantCulture));
        Dictionary<string, NodeArrow.ColumnSummary> written = NodeArrow.Read(output);
        Assert.Equal(input["id"], written["id"]);
        Assert.Equal(input["x"], written["x"]);
    }
}
