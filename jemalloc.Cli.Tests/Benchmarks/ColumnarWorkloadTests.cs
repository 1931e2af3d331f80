using jemalloc.Cli.Columnar;
using ParquetSharp;

namespace jemalloc.Cli.Tests.Benchmarks;

/// <summary><c>jembench columnar</c>'s kernels, check value, reference and process counters.</summary>
public unsafe class ColumnarWorkloadTests
{
    [Theory]
    [InlineData(1, 1)]
    [InlineData(37, 3)]
    [InlineData(1_048_576 + 1001, 4)]
    public void The_kernels_give_the_sums_computed_value_by_value(int rows, int columns)
    {
        double[][] data = [.. Enumerable.Range(0, columns).Select(c => Enumerable.Range(0, rows).Select(r => ColumnarData.ValueOf(c, r)).ToArray())];
        double[] expectedSums = [.. data.Select(d => d.Sum())];
        double[] expectedRows = [.. Enumerable.Range(0, rows).Select(r => data.Sum(d => d[r]))];
        var handles = data.Select(d => System.Runtime.InteropServices.GCHandle.Alloc(d, System.Runtime.InteropServices.GCHandleType.Pinned)).ToArray();
        try
        {
            nint[] pointers = [.. handles.Select(h => h.AddrOfPinnedObject())];
            for (int c = 0; c < columns; c++)
            {
                Assert.Equal(expectedSums[c], ColumnarKernels.ParallelSum((double*)pointers[c], rows));
                Assert.Equal(expectedSums[c], ColumnarKernels.Sum((double*)pointers[c], rows));
            }

            ColumnarKernels.ParallelAddRows(pointers, rows);
            Assert.Equal(expectedRows, data[0]);
            Assert.Equal(ColumnarData.RowCheckOf(expectedRows, 0), ColumnarKernels.ParallelRowCheck((double*)pointers[0], rows));
        }
        finally
        {
            foreach (var handle in handles)
            {
                handle.Free();
            }
        }
    }

    [Fact]
    public void The_row_check_adds_up_by_blocks_and_changes_with_any_one_row()
    {
        double[] sums = [.. Enumerable.Range(0, 1000).Select(r => (double)(r * 7 % 13))];
        ulong whole = ColumnarData.RowCheckOf(sums, 0);
        Assert.Equal(whole, ColumnarData.RowCheckOf(sums.AsSpan(0, 333), 0) + ColumnarData.RowCheckOf(sums.AsSpan(333), 333));
        Assert.NotEqual(whole, ColumnarData.RowCheckOf(sums, 1));
        foreach (int row in new[] { 0, 500, 999 })
        {
            double[] wrong = [.. sums];
            wrong[row] += 1;
            Assert.NotEqual(whole, ColumnarData.RowCheckOf(wrong, 0));
        }

        // Two rows swapped: the same values in other rows.
        double[] swapped = [.. sums];
        (swapped[1], swapped[2]) = (swapped[2], swapped[1]);
        Assert.True(swapped[1] != swapped[2]);
        Assert.NotEqual(whole, ColumnarData.RowCheckOf(swapped, 0));
    }

    [Fact]
    public void The_reference_of_a_written_file_is_the_data_s_sums_and_differences_name_what_is_wrong()
    {
        string path = Path.Combine(Path.GetTempPath(), $"columnar-{Guid.NewGuid():N}.parquet");
        try
        {
            const int rows = 5000;
            ColumnarReference reference = ColumnarData.Write(path, 2, rows, Compression.Gzip);
            double[] rowSums = [.. Enumerable.Range(0, rows).Select(r => ColumnarData.ValueOf(0, r) + ColumnarData.ValueOf(1, r))];
            Assert.Equal(Enumerable.Range(0, rows).Sum(r => ColumnarData.ValueOf(0, r)), reference.ColumnSums[0]);
            Assert.Equal(Enumerable.Range(0, rows).Sum(r => ColumnarData.ValueOf(1, r)), reference.ColumnSums[1]);
            Assert.Equal(ColumnarData.RowCheckOf(rowSums, 0), reference.RowCheck);
            Assert.All(Enumerable.Range(0, rows), r => Assert.InRange(ColumnarData.ValueOf(0, r), 0, (1 << ColumnarData.ValueBits) - 1));

            using (var file = new ParquetFileReader(path))
            {
                using FileMetaData metadata = file.FileMetaData;
                Assert.Equal(rows, metadata.NumRows);
                Assert.Equal(2, metadata.NumColumns);
                using RowGroupReader group = file.RowGroup(0);
                using ColumnChunkMetaData chunk = group.MetaData.GetColumnChunkMetaData(1);
                Assert.Equal(Compression.Gzip, chunk.Compression);
            }

            ColumnarResult right = Result([.. reference.ColumnSums], reference.RowCheck);
            Assert.Empty(reference.Differences(right));
            IReadOnlyList<string> wrong = reference.Differences(Result([reference.ColumnSums[0], reference.ColumnSums[1] + 1], reference.RowCheck ^ 1));
            Assert.Equal(2, wrong.Count);
            Assert.Contains("the sum of column 1 is", wrong[0], StringComparison.Ordinal);
            Assert.Contains("row sums", wrong[1], StringComparison.Ordinal);
            Assert.Single(reference.Differences(Result([reference.ColumnSums[0]], reference.RowCheck)));
        }
        finally
        {
            File.Delete(path);
        }
    }

    [Fact]
    public void The_process_counters_see_page_faults_and_a_voluntary_switch()
    {
        const long Bytes = 64L << 20;
        ProcessUsage before = ProcessUsage.Now();
        using (var block = new HugeArray<byte>(Bytes, AllocationOptions.Default))
        {
            block.Fill(1);
        }

        Thread.Sleep(20);
        ProcessUsage used = ProcessUsage.Now().Since(before);
        Assert.True(used.UserSeconds + used.SystemSeconds > 0, $"{used}");
        if (!ProcessUsage.IsSupported)
        {
            // Elsewhere than 64-bit Linux only the times are known.
            Assert.Equal((-1, -1, -1, -1), (used.MinorFaults, used.MajorFaults, used.VoluntarySwitches, used.InvoluntarySwitches));
            return;
        }

        // Every 4 KiB page of the block was touched once: at least that many minor faults (others' too).
        Assert.True(used.MinorFaults >= Bytes / 4096 * 9 / 10, $"{used}");
        Assert.True(used.MajorFaults >= 0 && used.VoluntarySwitches >= 1 && used.InvoluntarySwitches >= 0, $"{used}");
    }

    private static ColumnarResult Result(double[] sums, ulong rowCheck) =>
        new(ColumnarSide.Decode, sums.Length, 1, 1, 0, 0, 1, 0, 1, 0, 0, 0, 1, 0, 0, 0, sums, rowCheck);
}
