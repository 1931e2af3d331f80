using System.Runtime.InteropServices;
using jemalloc.Benchmarks.Infrastructure;
using jemalloc.Cli.Columnar;
using jemalloc.Parquet;
using ParquetSharp;
using Encoding = System.Text.Encoding;

namespace jemalloc.Cli.Strings;

/// <summary>
/// One side of <c>jembench strings</c>: loads the table's five columns, keeps the rows whose note
/// starts with <see cref="StringsData.NotePrefix"/>, groups them by category (rows and amount), adds
/// up the ids, frees the columns, and measures the four phases (wall time, the process's CPU times,
/// page faults, collections and GC pauses).
/// </summary>
public static partial class StringsHarness
{
    // Bytes of the selection bitmap the native sides walk at a time.
    private const int SelectionChunk = 1 << 16;

    /// <summary>Runs <paramref name="side"/> on the Parquet file at <paramref name="path"/>.</summary>
    /// <exception cref="NotSupportedException">The managed side was asked for more rows than one .NET array holds.</exception>
    /// <exception cref="InvalidDataException">The file's columns hold fewer or more values than its metadata says, or <c>amount</c> is not a DECIMAL of scale 2.</exception>
    /// <exception cref="ArgumentException">The file lacks one of the table's columns, or one has another type.</exception>
    public static StringsResult Run(StringsSide side, string path)
    {
        ArgumentNullException.ThrowIfNull(path);
        return side switch
        {
            StringsSide.Managed => RunManaged(path),
            StringsSide.Decode => RunDecode(path),
            _ => RunNative(path, side == StringsSide.NativeHuge ? AllocationOptions.WithHugePages : AllocationOptions.Default, side),
        };
    }

    private static StringsResult RunNative(string path, AllocationOptions options, StringsSide side)
    {
        byte[] prefix = Encoding.UTF8.GetBytes(StringsData.NotePrefix);
        using var meter = Meter.Start();
        HugeArray<long>? ids = null;
        NativeDictionaryColumn? categories = null, regions = null;
        NativeStringColumn? notes = null;
        DecimalColumn? amounts = null;
        HugeArray<byte>? selection = null;
        try
        {
            long rows;
            double stringLoad;
            using (var reader = new NativeParquetReader(path))
            {
                rows = reader.RowCount;
                ids = reader.ReadColumn<long>("id", options);
                TimeSpan stringsStart = meter.Elapsed;
                // The two columns of a few thousand distinct values stay dictionary-encoded: an index a row.
                categories = reader.ReadDictionaryColumn("category", options);
                regions = reader.ReadDictionaryColumn("region", options);
                notes = reader.ReadStringColumn("note", options);
                stringLoad = (meter.Elapsed - stringsStart).TotalSeconds;
                amounts = reader.ReadDecimalColumn("amount", options);
            }

            if (amounts.Scale != StringsData.AmountScale)
            {
                throw new InvalidDataException($"The amount column of '{path}' has scale {amounts.Scale}; the table's has {StringsData.AmountScale}.");
            }

            double load = meter.Lap();
            selection = new HugeArray<byte>(Math.Max(1, (rows + 7) / 8), options);
            long filtered = notes.SelectStartsWith(prefix, selection);
            double filter = meter.Lap();
            long idSum = ids.VectorSum();
            StringsGroup[] groups = GroupSelected(categories, amounts, selection);
            double group = meter.Lap();
            foreach (IDisposable column in new IDisposable[] { ids, categories, regions, notes, amounts, selection })
            {
                column.Dispose();
            }

            double free = meter.Lap();
            return meter.Result(side, rows, load, stringLoad, filter, group, free, filtered, idSum, groups);
        }
        finally
        {
            // Only on a failure are any left: disposing again does nothing.
            ids?.Dispose();
            categories?.Dispose();
            regions?.Dispose();
            notes?.Dispose();
            amounts?.Dispose();
            selection?.Dispose();
        }
    }

    // The selected rows grouped by their category's dictionary index: a count and a sum per index, no
    // hashing and no allocation per row; then the indices' totals are merged by their values' bytes (a
    // dictionary may name one value twice) and a null category counts as "", as on the managed side.
    private static StringsGroup[] GroupSelected(NativeDictionaryColumn categories, DecimalColumn amounts, HugeArray<byte> selection)
    {
        using NativeDictionaryColumnReadScope keys = categories.OpenRead();
        long[] rows = new long[keys.DictionaryLength + 1];
        long[] cents = new long[keys.DictionaryLength + 1];
        using (MemoryLease<byte> bits = selection.Lease())
        {
            long bytes = (categories.Length + 7) / 8;
            for (long start = 0; start < bytes; start += SelectionChunk)
            {
                Span<byte> chunk = bits.AsSpan(start, (int)Math.Min(SelectionChunk, bytes - start));
                for (int i = 0; i < chunk.Length; i++)
                {
                    for (uint mask = chunk[i]; mask != 0; mask &= mask - 1)
                    {
                        long row = ((start + i) << 3) + System.Numerics.BitOperations.TrailingZeroCount(mask);
                        int group = keys.GetIndex(row) + 1;
                        rows[group]++;
                        cents[group] += amounts.IsNull(row) ? 0 : (long)amounts.GetUnscaled(row);
                    }
                }
            }
        }

        var table = new Utf8GroupTable();
        for (int group = 0; group < rows.Length; group++)
        {
            if (rows[group] > 0)
            {
                table.Add(group == 0 ? default : keys.GetDictionaryValue(group - 1), rows[group], cents[group]);
            }
        }

        return table.ToGroups();
    }

    private static StringsResult RunManaged(string path)
    {
        using var meter = Meter.Start();
        long[]? ids;
        string?[]? categories, regions, notes;
        decimal?[]? amounts;
        long rows;
        double stringLoad;
        using (var file = new ParquetFileReader(path))
        {
            using FileMetaData metadata = file.FileMetaData;
            rows = metadata.NumRows;
            if (rows > Array.MaxLength)
            {
                throw new NotSupportedException($"The managed side holds each column in one .NET array, which has at most {Array.MaxLength:N0} elements; the file has {rows:N0} rows.");
            }

            ids = ReadColumn<long>(file, metadata, "id");
            TimeSpan stringsStart = meter.Elapsed;
            categories = ReadColumn<string?>(file, metadata, "category");
            regions = ReadColumn<string?>(file, metadata, "region");
            notes = ReadColumn<string?>(file, metadata, "note");
            stringLoad = (meter.Elapsed - stringsStart).TotalSeconds;
            amounts = ReadColumn<decimal?>(file, metadata, "amount");
        }

        double load = meter.Lap();
        var selected = new List<int>();
        for (int row = 0; row < notes.Length; row++)
        {
            if (notes[row] is string note && note.StartsWith(StringsData.NotePrefix, StringComparison.Ordinal))
            {
                selected.Add(row);
            }
        }

        double filter = meter.Lap();
        long idSum = 0;
        foreach (long id in ids)
        {
            idSum += id;
        }

        var sums = new Dictionary<string, (long Rows, decimal Amount)>(StringComparer.Ordinal);
        foreach (int row in selected)
        {
            ref (long Rows, decimal Amount) sum = ref CollectionsMarshal.GetValueRefOrAddDefault(sums, categories[row] ?? "", out _);
            sum.Rows++;
            sum.Amount += amounts[row] ?? 0m;
        }

        StringsGroup[] groups = StringsGroup.Sorted(sums.Select(pair => new StringsGroup(pair.Key, pair.Value.Rows, (long)(pair.Value.Amount * 100))));
        double group = meter.Lap();

        // The managed columns are freed by dropping them: the collector takes the memory back at its next collection.
        ids = null;
        categories = regions = notes = null;
        amounts = null;
        double free = meter.Lap();
        return meter.Result(StringsSide.Managed, rows, load, stringLoad, filter, group, free, selected.Count, idSum, groups);
    }

    // One column read whole through ParquetSharp's logical reader, row group by row group, into one array.
    private static T[] ReadColumn<T>(ParquetFileReader file, FileMetaData metadata, string name)
    {
        int index = ColumnIndexOf(metadata, name);
        var values = new T[checked((int)metadata.NumRows)];
        int start = 0;
        for (int g = 0; g < metadata.NumRowGroups; g++)
        {
            using RowGroupReader group = file.RowGroup(g);
            int groupRows = checked((int)group.MetaData.NumRows);
            if (groupRows > values.Length - start)
            {
                throw new InvalidDataException($"The row groups of column '{name}' hold more rows than the file's {values.Length:N0}.");
            }

            using ColumnReader column = group.Column(index);
            using LogicalColumnReader<T> reader = column.LogicalReader<T>();
            int done = 0;
            while (done < groupRows)
            {
                int read = reader.ReadBatch(values.AsSpan(start + done, groupRows - done));
                if (read <= 0)
                {
                    throw new InvalidDataException($"Column '{name}' ends {groupRows - done:N0} rows before the end of row group {g}.");
                }

                done += read;
            }

            start += groupRows;
        }

        if (start != values.Length)
        {
            throw new InvalidDataException($"The row groups of column '{name}' hold {start:N0} rows; the file's metadata says {values.Length:N0}.");
        }

        return values;
    }

    // The phases' meter with the strings result; it tracks every GC pause, so the sides never pause it.
    private sealed class Meter : PhaseMeter
    {
        private Meter()
            : base(trackGcPauses: true)
        {
        }

        public static Meter Start() => new();

        public StringsResult Result(StringsSide side, long rows, double load, double stringLoad, double filter, double group, double free,
            long filtered, long idSum, StringsGroup[] groups)
        {
            PhaseTotals totals = Stop();
            ProcessUsage usage = totals.Usage;
            long[] cents = [.. groups.Select(g => g.AmountCents)];
            BrokenResultSwitch.Corrupt(cents.AsSpan());
            return new StringsResult(
                side, rows, load, stringLoad, filter, group, free,
                usage.UserSeconds, usage.SystemSeconds, usage.MinorFaults, usage.MajorFaults,
                ProcessMemory.PeakResidentBytes(Environment.ProcessId) ?? -1,
                totals.Gen0, totals.Gen1, totals.Gen2, totals.TotalGcPauseMs, totals.LongestGcPauseMs,
                BrokenResultSwitch.Corrupt(filtered), idSum,
                [.. groups.Select((g, i) => g with { AmountCents = cents[i] })]);
        }
    }
}
