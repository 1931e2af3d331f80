using jemalloc.Benchmarks.Suites.HugePages;

namespace jemalloc.Cli.Tests.Benchmarks;

/// <summary>The columnar workload's full result check recomputes every row, from any starting row.</summary>
public unsafe class ColumnarResultTests
{
    [Theory]
    [InlineData(1, 1)]
    [InlineData(37, 3)]
    [InlineData(1001, 4)]
    public void A_right_result_passes_and_any_wrong_row_fails(int rows, int columns)
    {
        ulong[][] data = [.. Enumerable.Range(0, columns).Select(_ => new ulong[rows])];
        var result = new ulong[rows];
        fixed (ulong* r = result)
        {
            Span<nint> pointers = stackalloc nint[columns];
            var handles = data.Select(d => System.Runtime.InteropServices.GCHandle.Alloc(d, System.Runtime.InteropServices.GCHandleType.Pinned)).ToArray();
            try
            {
                for (int c = 0; c < columns; c++)
                {
                    pointers[c] = handles[c].AddrOfPinnedObject();
                }

                ColumnarWorkload.Run(pointers, r, rows);
            }
            finally
            {
                foreach (var handle in handles)
                {
                    handle.Free();
                }
            }
        }

        Assert.True(ColumnarWorkload.ResultIsRight(result, 0, columns));
        // Checked in two parts, the second starting at a row that is not a multiple of the vector width.
        int split = rows / 2 + 1;
        Assert.True(ColumnarWorkload.ResultIsRight(result.AsSpan(0, Math.Min(split, rows)), 0, columns));
        Assert.True(ColumnarWorkload.ResultIsRight(result.AsSpan(Math.Min(split, rows)), Math.Min(split, rows), columns));
        Assert.False(ColumnarWorkload.ResultIsRight(result, 0, columns + 1));

        result[rows - 1]++;
        Assert.False(ColumnarWorkload.ResultIsRight(result, 0, columns));
        Assert.False(ColumnarWorkload.ResultIsRight(result.AsSpan(rows - 1), rows - 1, columns));
    }
}
