using System.Runtime.InteropServices;
using jemalloc.Benchmarks.Infrastructure;
using jemalloc.Parquet;
using ParquetSharp;

namespace jemalloc.Cli.Columnar;

/// <summary>
/// One side of <c>jembench columnar</c>: loads the file's columns, sums down each column and across
/// the rows, frees the columns, and measures the three phases (wall time, the process's CPU times,
/// page faults, context switches and collections; the result check between the sums and the free
/// is left out of the counters).
/// </summary>
public static unsafe class ColumnarHarness
{
    /// <summary>Rows decoded per call on every side (NativeParquetReader's chunk).</summary>
    public const int ChunkRows = 65_536;

    /// <summary>
    /// Runs <paramref name="side"/> on the Parquet file at <paramref name="path"/>; every side verifies
    /// the pages' checksums, or none does, as <paramref name="verifyPageChecksums"/> says, so that all do the same work.
    /// </summary>
    /// <exception cref="NotSupportedException">The managed side was asked for more rows than one .NET array holds.</exception>
    /// <exception cref="InvalidDataException">The file holds fewer values than its metadata says.</exception>
    public static ColumnarResult Run(ColumnarSide side, string path, bool verifyPageChecksums = true)
    {
        ArgumentNullException.ThrowIfNull(path);
        return side switch
        {
            ColumnarSide.Managed => RunManaged(path, verifyPageChecksums),
            ColumnarSide.Decode => RunDecode(path, verifyPageChecksums),
            _ => RunNative(path, side == ColumnarSide.NativeHuge ? AllocationOptions.WithHugePages : AllocationOptions.Default, side, verifyPageChecksums),
        };
    }

    // ParquetSharp's reader with page checksums verified or not, for the managed and decode sides.
    private static ParquetFileReader OpenManaged(string path, bool verifyPageChecksums)
    {
        using ReaderProperties properties = ReaderProperties.GetDefaultReaderProperties();
        if (verifyPageChecksums)
        {
            properties.EnablePageChecksumVerification();
        }
        else
        {
            properties.DisablePageChecksumVerification();
        }

        return new ParquetFileReader(path, properties);
    }

    private static ColumnarResult RunNative(string path, AllocationOptions options, ColumnarSide side, bool verifyPageChecksums)
    {
        var meter = Meter.Start();
        var columns = new List<HugeArray<double>>();
        try
        {
            long rows;
            using (var reader = new NativeParquetReader(path, new ParquetReadOptions { VerifyPageChecksums = verifyPageChecksums }))
            {
                rows = reader.RowCount;
                for (int c = 0; c < reader.ColumnCount; c++)
                {
                    columns.Add(reader.ReadColumn<double>(reader.GetColumnName(c), options));
                }
            }

            double load = meter.Lap();
            var sums = new double[columns.Count];
            for (int c = 0; c < columns.Count; c++)
            {
                sums[c] = columns[c].ParallelVectorSum();
            }

            var pointers = new nint[columns.Count];
            double sum;
            ulong rowCheck;
            var holds = new List<MemoryHold>(columns.Count);
            try
            {
                for (int c = 0; c < columns.Count; c++)
                {
                    holds.Add(columns[c].Hold());
                    pointers[c] = columns[c].Pointer;
                }

                ColumnarKernels.ParallelAddRows(pointers, rows);
                sum = meter.Pause();
                rowCheck = ColumnarKernels.ParallelRowCheck((double*)pointers[0], rows);
                meter.Resume();
            }
            finally
            {
                foreach (MemoryHold hold in holds)
                {
                    hold.Dispose();
                }
            }

            foreach (HugeArray<double> column in columns)
            {
                column.Dispose();
            }

            double free = meter.Lap();
            return meter.Result(side, columns.Count, rows, load, sum, free, sums, rowCheck);
        }
        finally
        {
            // Only on a failure are any left: disposing again does nothing.
            foreach (HugeArray<double> column in columns)
            {
                column.Dispose();
            }
        }
    }

    private static ColumnarResult RunManaged(string path, bool verifyPageChecksums)
    {
        var meter = Meter.Start();
        double[][] arrays;
        long rows;
        using (ParquetFileReader file = OpenManaged(path, verifyPageChecksums))
        {
            using FileMetaData metadata = file.FileMetaData;
            rows = metadata.NumRows;
            if (rows > Array.MaxLength)
            {
                throw new NotSupportedException($"The managed side holds each column in one .NET array, which has at most {Array.MaxLength:N0} elements; the file has {rows:N0} rows.");
            }

            arrays = new double[metadata.NumColumns][];
            for (int c = 0; c < arrays.Length; c++)
            {
                arrays[c] = GC.AllocateUninitializedArray<double>((int)rows);
            }

            int start = 0;
            for (int g = 0; g < metadata.NumRowGroups; g++)
            {
                using RowGroupReader group = file.RowGroup(g);
                int groupRows = checked((int)group.MetaData.NumRows);
                for (int c = 0; c < arrays.Length; c++)
                {
                    using var reader = (ColumnReader<double>)group.Column(c);
                    ReadInto(reader, arrays[c].AsSpan(start, groupRows));
                }

                start += groupRows;
            }

            if (start != rows)
            {
                throw new InvalidDataException($"The file's row groups hold {start:N0} rows; its metadata says {rows:N0}.");
            }
        }

        double load = meter.Lap();
        var sums = new double[arrays.Length];
        var handles = new GCHandle[arrays.Length];
        var pointers = new nint[arrays.Length];
        ulong rowCheck;
        double sum;
        try
        {
            for (int c = 0; c < arrays.Length; c++)
            {
                handles[c] = GCHandle.Alloc(arrays[c], GCHandleType.Pinned);
                pointers[c] = handles[c].AddrOfPinnedObject();
                sums[c] = ColumnarKernels.ParallelSum((double*)pointers[c], rows);
            }

            ColumnarKernels.ParallelAddRows(pointers, rows);
            sum = meter.Pause();
            rowCheck = ColumnarKernels.ParallelRowCheck((double*)pointers[0], rows);
            meter.Resume();
        }
        finally
        {
            foreach (GCHandle handle in handles)
            {
                if (handle.IsAllocated)
                {
                    handle.Free();
                }
            }
        }

        // The managed columns are freed by dropping them: the collector takes the memory back at its next collection.
        int columns = arrays.Length;
        Array.Clear(arrays);
        double free = meter.Lap();
        return meter.Result(ColumnarSide.Managed, columns, rows, load, sum, free, sums, rowCheck);
    }

    private static ColumnarResult RunDecode(string path, bool verifyPageChecksums)
    {
        var meter = Meter.Start();
        using ParquetFileReader file = OpenManaged(path, verifyPageChecksums);
        using FileMetaData metadata = file.FileMetaData;
        long rows = metadata.NumRows;
        int columns = metadata.NumColumns;
        double[][] buffers = [.. Enumerable.Range(0, columns).Select(_ => new double[ChunkRows])];
        var pointers = new nint[columns];
        var handles = new GCHandle[columns];
        var sums = new double[columns];
        ulong rowCheck = 0;
        long row = 0;
        try
        {
            for (int c = 0; c < columns; c++)
            {
                handles[c] = GCHandle.Alloc(buffers[c], GCHandleType.Pinned);
                pointers[c] = handles[c].AddrOfPinnedObject();
            }

            var readers = new ColumnReader<double>[columns];
            for (int g = 0; g < metadata.NumRowGroups; g++)
            {
                using RowGroupReader group = file.RowGroup(g);
                long left = group.MetaData.NumRows;
                try
                {
                    for (int c = 0; c < columns; c++)
                    {
                        readers[c] = (ColumnReader<double>)group.Column(c);
                    }

                    while (left > 0)
                    {
                        int batch = (int)Math.Min(left, ChunkRows);
                        for (int c = 0; c < columns; c++)
                        {
                            ReadInto(readers[c], buffers[c].AsSpan(0, batch));
                            sums[c] += ColumnarKernels.Sum((double*)pointers[c], batch);
                        }

                        ColumnarKernels.AddRows(pointers, 0, batch);
                        rowCheck += ColumnarData.RowCheckOf(buffers[0].AsSpan(0, batch), row);
                        row += batch;
                        left -= batch;
                    }
                }
                finally
                {
                    foreach (ColumnReader<double>? reader in readers)
                    {
                        reader?.Dispose();
                    }

                    Array.Clear(readers);
                }
            }
        }
        finally
        {
            foreach (GCHandle handle in handles)
            {
                if (handle.IsAllocated)
                {
                    handle.Free();
                }
            }
        }

        if (row != rows)
        {
            throw new InvalidDataException($"The file's row groups hold {row:N0} rows; its metadata says {rows:N0}.");
        }

        double load = meter.Lap();
        return meter.Result(ColumnarSide.Decode, columns, rows, load, 0, 0, sums, rowCheck);
    }

    // Fills the span from the column, however many calls the decoder takes.
    private static void ReadInto(ColumnReader<double> reader, Span<double> target)
    {
        int done = 0;
        while (done < target.Length)
        {
            long read = reader.ReadBatch(Math.Min(target.Length - done, ChunkRows), default, default, target[done..], out _);
            if (read <= 0)
            {
                throw new InvalidDataException($"A column chunk ends {target.Length - done:N0} rows before its row group's end.");
            }

            done += (int)read;
        }
    }

    // The phases' meter with the columnar result; GC pauses are not tracked here (the sides pause the
    // meter for their result checks).
    private sealed class Meter : PhaseMeter
    {
        private Meter()
            : base(trackGcPauses: false)
        {
        }

        public static Meter Start() => new();

        public ColumnarResult Result(ColumnarSide side, int columns, long rows, double load, double sum, double free, double[] sums, ulong rowCheck)
        {
            PhaseTotals totals = Stop();
            ProcessUsage usage = totals.Usage;
            BrokenResultSwitch.Corrupt(sums.AsSpan());
            return new ColumnarResult(
                side, columns, rows, load, sum, free,
                usage.UserSeconds, usage.SystemSeconds, usage.MinorFaults, usage.MajorFaults, usage.VoluntarySwitches, usage.InvoluntarySwitches,
                ProcessMemory.PeakResidentBytes(Environment.ProcessId) ?? -1,
                totals.Gen0, totals.Gen1, totals.Gen2, sums, BrokenResultSwitch.Corrupt(rowCheck));
        }
    }
}
