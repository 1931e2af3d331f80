using System.Buffers.Binary;
using System.Globalization;
using Apache.Arrow;
using Apache.Arrow.Arrays;
using Apache.Arrow.Ipc;

namespace jemalloc.Arrow.Tests;

/// <summary>
/// Reads the vendored arrow-testing corpus (Corpus/arrow-testing, see its README.md) two ways into
/// comparable rows: every column by <see cref="ArrowIpcReader"/> with the read its type calls for, and
/// every column by Apache Arrow for .NET. A row is a string that names its value exactly (floats by
/// their bits, binary in hex, decimals as unscaled integer and scale), or <see langword="null"/>.
/// </summary>
internal static class IpcCorpus
{
    internal static string Root => Path.Combine(AppContext.BaseDirectory, "Corpus", "arrow-testing");

    internal static string Integration(string order, string name, ArrowIpcFormat format) =>
        Path.Combine(Root, "integration", "1.0.0-" + order, name + (format == ArrowIpcFormat.File ? ".arrow_file" : ".stream"));

    /// <summary>Every fuzz file's path relative to <see cref="Root"/>: the clusterfuzz and crash inputs of both upstream folders.</summary>
    internal static IEnumerable<string> FuzzFiles() =>
        Directory.EnumerateFiles(Path.Combine(Root, "fuzz"), "*", SearchOption.AllDirectories)
            .Select(p => Path.GetRelativePath(Root, p).Replace('\\', '/'))
            .Order(StringComparer.Ordinal);

    /// <summary>A column as our reader read it: its rows, or the exception that refused it.</summary>
    internal sealed record Column(string Name, string TypeName, List<string?>? Rows, Exception? Refusal);

    /// <summary>Reads every column of the reader's input; a refusal (a type the reader does not read, or values it holds malformed) is kept, any other exception propagates.</summary>
    internal static List<Column> ReadAll(ArrowIpcReader reader)
    {
        var columns = new List<Column>();
        foreach (ArrowIpcField field in reader.Fields)
        {
            try
            {
                columns.Add(new Column(field.Name, field.TypeName, ReadColumn(reader, field), null));
            }
            catch (Exception e) when (e is NotSupportedException or InvalidDataException)
            {
                columns.Add(new Column(field.Name, field.TypeName, null, e));
            }
        }

        return columns;
    }

    /// <summary>Reads one column with the read its type calls for and disposes what was read.</summary>
    internal static List<string?> ReadColumn(ArrowIpcReader reader, ArrowIpcField field)
    {
        string name = field.Name;
        if (field.IsDictionaryEncoded && field.Type is ArrowIpcType.Utf8 or ArrowIpcType.LargeUtf8 or ArrowIpcType.Binary or ArrowIpcType.LargeBinary)
        {
            using NativeDictionaryColumn column = reader.ReadDictionaryColumn(name);
            var rows = new List<string?>();
            for (long r = 0; r < column.Length; r++)
            {
                rows.Add(column.IsNull(r) ? null : column.IsUtf8 ? "s:" + column.GetString(r) : "b:" + Convert.ToHexString(column.GetBytes(r)!));
            }

            return rows;
        }

        switch (field.Type)
        {
            case ArrowIpcType.Null:
                // A Null column has no buffers: every row is null. (A forged input may declare more rows
                // than a list holds: then one entry that says how many.)
                return reader.RowCount <= 1 << 20 ? Enumerable.Repeat<string?>(null, (int)reader.RowCount).ToList() : [$"{reader.RowCount} nulls"];
            case ArrowIpcType.Utf8 or ArrowIpcType.LargeUtf8 or ArrowIpcType.Binary or ArrowIpcType.LargeBinary:
            {
                using NativeStringColumn column = reader.ReadStringColumn(name);
                var rows = new List<string?>();
                for (long r = 0; r < column.Length; r++)
                {
                    rows.Add(column.IsNull(r) ? null : column.IsUtf8 ? "s:" + column.GetString(r) : "b:" + Convert.ToHexString(column.GetBytes(r)!));
                }

                return rows;
            }

            case ArrowIpcType.Decimal128:
            case ArrowIpcType.Other when field.Precision is not null:
            {
                // Decimals of every width go to ReadDecimalColumn, whose refusal of 256 bits says why.
                using DecimalColumn column = reader.ReadDecimalColumn(name);
                var rows = new List<string?>();
                for (long r = 0; r < column.Length; r++)
                {
                    rows.Add(column.IsNull(r) ? null : Decimal(column.GetUnscaled(r), column.Scale));
                }

                return rows;
            }

            case ArrowIpcType.FixedSizeBinary:
            {
                using FixedSizeBinaryColumn column = reader.ReadFixedSizeBinaryColumn(name);
                var rows = new List<string?>();
                byte[] value = new byte[column.ByteWidth];
                for (long r = 0; r < column.Length; r++)
                {
                    column.CopyValue(r, value);
                    rows.Add(column.IsNull(r) ? null : Convert.ToHexString(value));
                }

                return rows;
            }

            case ArrowIpcType.Boolean: return Fixed<bool>(reader, name, v => v ? "true" : "false");
            case ArrowIpcType.Int8: return Fixed<sbyte>(reader, name, Invariant);
            case ArrowIpcType.UInt8: return Fixed<byte>(reader, name, Invariant);
            case ArrowIpcType.Int16: return Fixed<short>(reader, name, Invariant);
            case ArrowIpcType.UInt16: return Fixed<ushort>(reader, name, Invariant);
            case ArrowIpcType.Int32 or ArrowIpcType.Date32 or ArrowIpcType.Time32: return Fixed<int>(reader, name, Invariant);
            case ArrowIpcType.UInt32: return Fixed<uint>(reader, name, Invariant);
            case ArrowIpcType.Int64 or ArrowIpcType.Date64 or ArrowIpcType.Timestamp or ArrowIpcType.Time64 or ArrowIpcType.Duration:
                return Fixed<long>(reader, name, Invariant);
            case ArrowIpcType.UInt64: return Fixed<ulong>(reader, name, Invariant);
            case ArrowIpcType.HalfFloat: return Fixed<Half>(reader, name, Bits);
            case ArrowIpcType.Float: return Fixed<float>(reader, name, Bits);
            case ArrowIpcType.Double: return Fixed<double>(reader, name, Bits);
            default:
                // Other types: the reader's own refusal (a NotSupportedException naming the column) is the answer.
                reader.ReadColumn<long>(name, AllocationOptions.Default, out HugeArray<byte> bits).Dispose();
                bits.Dispose();
                throw new InvalidOperationException($"Column '{name}' of type {field.TypeName} was read as Int64.");
        }
    }

    /// <summary>Every column of the file or stream at <paramref name="path"/> as Apache Arrow for .NET reads it, by name.</summary>
    internal static Dictionary<string, List<string?>> ReadWithApache(string path, ArrowIpcFormat format)
    {
        using FileStream file = File.OpenRead(path);
        using ArrowStreamReader reader = format == ArrowIpcFormat.File ? new ArrowFileReader(file) : new ArrowStreamReader(file);
        var columns = new Dictionary<string, List<string?>>(StringComparer.Ordinal);
        Schema schema = reader.Schema;
        foreach (Apache.Arrow.Field field in schema.FieldsList)
        {
            columns[field.Name] = [];
        }

        while (reader.ReadNextRecordBatch() is RecordBatch batch)
        {
            using (batch)
            {
                for (int c = 0; c < schema.FieldsList.Count; c++)
                {
                    IArrowArray array = batch.Column(c);
                    List<string?> rows = columns[schema.FieldsList[c].Name];
                    for (int i = 0; i < array.Length; i++)
                    {
                        rows.Add(array.IsNull(i) ? null : ApacheValue(array, i));
                    }
                }
            }
        }

        return columns;
    }

    private static string? ApacheValue(IArrowArray array, int i) => array switch
    {
        NullArray => null,
        DictionaryArray a => a.Indices.IsNull(i) || a.Dictionary.IsNull(DictionaryIndex(a.Indices, i)) ? null : ApacheValue(a.Dictionary, DictionaryIndex(a.Indices, i)),
        BooleanArray a => a.GetValue(i)!.Value ? "true" : "false",
        StringArray a => "s:" + a.GetString(i),
        LargeStringArray a => "s:" + a.GetString(i),
        BinaryArray a => "b:" + Convert.ToHexString(a.GetBytes(i)),
        LargeBinaryArray a => "b:" + Convert.ToHexString(a.GetBytes(i)),
        Decimal128Array a => Decimal(BinaryPrimitives.ReadInt128LittleEndian(a.GetBytes(i)), ((Apache.Arrow.Types.Decimal128Type)a.Data.DataType).Scale),
        FixedSizeBinaryArray a => Convert.ToHexString(a.GetBytes(i)),
        PrimitiveArray<sbyte> a => Invariant(a.Values[i]),
        PrimitiveArray<byte> a => Invariant(a.Values[i]),
        PrimitiveArray<short> a => Invariant(a.Values[i]),
        PrimitiveArray<ushort> a => Invariant(a.Values[i]),
        PrimitiveArray<int> a => Invariant(a.Values[i]),
        PrimitiveArray<uint> a => Invariant(a.Values[i]),
        PrimitiveArray<long> a => Invariant(a.Values[i]),
        PrimitiveArray<ulong> a => Invariant(a.Values[i]),
        PrimitiveArray<Half> a => Bits(a.Values[i]),
        PrimitiveArray<float> a => Bits(a.Values[i]),
        PrimitiveArray<double> a => Bits(a.Values[i]),
        // Types the reader refuses: never compared, so a marker that equals no row of ours.
        _ => "unread " + array.GetType().Name,
    };

    private static int DictionaryIndex(IArrowArray indices, int i) => indices switch
    {
        PrimitiveArray<sbyte> a => a.Values[i],
        PrimitiveArray<byte> a => a.Values[i],
        PrimitiveArray<short> a => a.Values[i],
        PrimitiveArray<ushort> a => a.Values[i],
        PrimitiveArray<int> a => a.Values[i],
        PrimitiveArray<uint> a => checked((int)a.Values[i]),
        PrimitiveArray<long> a => checked((int)a.Values[i]),
        PrimitiveArray<ulong> a => checked((int)a.Values[i]),
        _ => throw new NotSupportedException($"Dictionary indices of {indices.GetType().Name}."),
    };

    private static List<string?> Fixed<T>(ArrowIpcReader reader, string name, Func<T, string> format)
        where T : unmanaged, IEquatable<T>
    {
        if (reader.RowCount == 0)
        {
            // An array has at least one element: the reader says so (unless it refuses the column's type
            // first), and the column has no rows to compare.
            try
            {
                reader.ReadColumn<T>(name, AllocationOptions.Default, out _).Dispose();
            }
            catch (InvalidOperationException)
            {
                return [];
            }

            throw new Xunit.Sdk.XunitException($"Column '{name}' of an input with no rows was read into an array.");
        }

        using HugeArray<T> values = reader.ReadColumn<T>(name, AllocationOptions.Default, out HugeArray<byte> validity);
        using (validity)
        {
            var rows = new List<string?>((int)values.Length);
            for (long r = 0; r < values.Length; r++)
            {
                rows.Add((validity[r >> 3] & (1 << (int)(r & 7))) == 0 ? null : format(values[r]));
            }

            return rows;
        }
    }

    internal static string Decimal(Int128 unscaled, int scale) => unscaled.ToString(CultureInfo.InvariantCulture) + "e-" + scale.ToString(CultureInfo.InvariantCulture);

    private static string Invariant<T>(T value)
        where T : IFormattable => value.ToString(null, CultureInfo.InvariantCulture);

    private static string Bits(Half value) => "h" + BitConverter.HalfToUInt16Bits(value).ToString("X4", CultureInfo.InvariantCulture);

    private static string Bits(float value) => "f" + BitConverter.SingleToUInt32Bits(value).ToString("X8", CultureInfo.InvariantCulture);

    private static string Bits(double value) => "d" + BitConverter.DoubleToUInt64Bits(value).ToString("X16", CultureInfo.InvariantCulture);
}
