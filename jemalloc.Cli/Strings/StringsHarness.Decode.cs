using System.Diagnostics;
using ParquetSharp;
using Encoding = System.Text.Encoding;

namespace jemalloc.Cli.Strings;

// The decode side: ParquetSharp's physical readers into one reused 64K-row buffer per column, the
// filter and group-by done batch by batch on the decoder's own bytes (valid until its next batch), so
// no column is kept: the speed of decoding alone, which the loads that keep the columns approach.
public static partial class StringsHarness
{
    /// <summary>Rows the decode side decodes at a time.</summary>
    public const int DecodeBatchRows = 65_536;

    // The table's columns, in the order the decode side reads them by.
    private static readonly string[] TableColumns = ["id", "category", "region", "note", "amount"];

    // Their physical types: DECIMAL(18,2) is stored as INT64.
    private static readonly PhysicalType[] TablePhysicalTypes = [PhysicalType.Int64, PhysicalType.ByteArray, PhysicalType.ByteArray, PhysicalType.ByteArray, PhysicalType.Int64];

    private static unsafe StringsResult RunDecode(string path)
    {
        byte[] prefix = Encoding.UTF8.GetBytes(StringsData.NotePrefix);
        using var meter = Meter.Start();
        using var file = new ParquetFileReader(path);
        using FileMetaData metadata = file.FileMetaData;
        long rows = metadata.NumRows;
        int[] columns = [.. TableColumns.Select(name => ColumnIndexOf(metadata, name))];
        CheckPhysicalTypes(metadata, path, columns);
        bool[] optional = [.. columns.Select(c => metadata.Schema.Column(c).MaxDefinitionLevel > 0)];
        var ids = new long[DecodeBatchRows];
        var amountValues = new long[DecodeBatchRows];
        var amountByRow = new long[DecodeBatchRows];
        var matched = new bool[DecodeBatchRows];
        var strings = new ByteArray[DecodeBatchRows];
        var levels = new short[DecodeBatchRows];
        var table = new Utf8GroupTable();
        long idSum = 0, filtered = 0, stringTicks = 0, done = 0;
        for (int g = 0; g < metadata.NumRowGroups; g++)
        {
            using RowGroupReader group = file.RowGroup(g);
            using var idReader = (ColumnReader<long>)group.Column(columns[0]);
            using var categoryReader = (ColumnReader<ByteArray>)group.Column(columns[1]);
            using var regionReader = (ColumnReader<ByteArray>)group.Column(columns[2]);
            using var noteReader = (ColumnReader<ByteArray>)group.Column(columns[3]);
            using var amountReader = (ColumnReader<long>)group.Column(columns[4]);
            long left = group.MetaData.NumRows;
            while (left > 0)
            {
                int batch = (int)Math.Min(left, DecodeBatchRows);
                for (int row = 0; row < batch;)
                {
                    int got = ReadSome(idReader, optional[0], batch - row, levels, ids, out int values);
                    for (int i = 0; i < values; i++)
                    {
                        idSum += ids[i];
                    }

                    row += got;
                }

                for (int row = 0; row < batch;)
                {
                    int got = ReadSome(amountReader, optional[4], batch - row, levels, amountValues, out _);
                    for (int i = 0, value = 0; i < got; i++)
                    {
                        // A null takes a level but no value: a null amount adds 0.
                        amountByRow[row + i] = !optional[4] || levels[i] > 0 ? amountValues[value++] : 0;
                    }

                    row += got;
                }

                // A string value points into the reader's page, valid only until the reader's next call:
                // each call's values are used before the next one.
                long stringStart = Stopwatch.GetTimestamp();
                for (int row = 0; row < batch;)
                {
                    int got = ReadSome(noteReader, optional[3], batch - row, levels, strings, out _);
                    for (int i = 0, value = 0; i < got; i++)
                    {
                        bool present = !optional[3] || levels[i] > 0;
                        matched[row + i] = present && Bytes(strings[value]).StartsWith(prefix);
                        value += present ? 1 : 0;
                    }

                    row += got;
                }

                for (int row = 0; row < batch;)
                {
                    row += ReadSome(regionReader, optional[2], batch - row, levels, strings, out _);
                }

                for (int row = 0; row < batch;)
                {
                    int got = ReadSome(categoryReader, optional[1], batch - row, levels, strings, out _);
                    for (int i = 0, value = 0; i < got; i++)
                    {
                        bool present = !optional[1] || levels[i] > 0;
                        if (matched[row + i])
                        {
                            filtered++;
                            table.Add(present ? Bytes(strings[value]) : default, amountByRow[row + i]);
                        }

                        value += present ? 1 : 0;
                    }

                    row += got;
                }

                stringTicks += Stopwatch.GetTimestamp() - stringStart;
                done += batch;
                left -= batch;
            }
        }

        if (done != rows)
        {
            throw new InvalidDataException($"The row groups of '{path}' hold {done:N0} rows; its metadata says {rows:N0}.");
        }

        StringsGroup[] groups = table.ToGroups();
        double load = meter.Lap();
        return meter.Result(StringsSide.Decode, rows, load, (double)stringTicks / Stopwatch.Frequency, 0, 0, 0, filtered, idSum, groups);
    }

    private static unsafe ReadOnlySpan<byte> Bytes(ByteArray value) => new((void*)value.Pointer, value.Length);

    // One call of the decoder: at most `rows` rows' levels into the front of `levels` (for an optional
    // column) and their values into the front of `values`; returns the rows read.
    private static int ReadSome<T>(ColumnReader<T> reader, bool optional, int rows, short[] levels, T[] values, out int valueCount)
        where T : unmanaged
    {
        long got = reader.ReadBatch(rows, optional ? levels.AsSpan(0, rows) : default, default, values.AsSpan(0, rows), out long gotValues);
        if (got <= 0)
        {
            ThrowShortColumn(reader.ColumnDescriptor.Name, rows);
        }

        valueCount = (int)gotValues;
        return (int)got;
    }

    private static void CheckPhysicalTypes(FileMetaData metadata, string path, int[] columns)
    {
        for (int c = 0; c < columns.Length; c++)
        {
            ColumnDescriptor column = metadata.Schema.Column(columns[c]);
            if (column.PhysicalType != TablePhysicalTypes[c])
            {
                throw new ArgumentException($"Column '{column.Name}' of '{path}' is {column.PhysicalType}; the decode side reads it as {TablePhysicalTypes[c]}.", nameof(path));
            }
        }

        using LogicalType amount = metadata.Schema.Column(columns[4]).LogicalType;
        if (amount is not DecimalLogicalType { Scale: StringsData.AmountScale })
        {
            throw new InvalidDataException($"The amount column of '{path}' is not a DECIMAL of scale {StringsData.AmountScale}.");
        }
    }

    private static int ColumnIndexOf(FileMetaData metadata, string name)
    {
        int index = metadata.Schema.ColumnIndex(name);
        return index >= 0 ? index : throw new ArgumentException($"The file has no column '{name}'.", nameof(name));
    }

    private static void ThrowShortColumn(string column, int missing) =>
        throw new InvalidDataException($"Column '{column}' ends {missing:N0} rows before the end of its row group.");
}
