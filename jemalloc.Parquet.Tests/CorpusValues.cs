using System.Globalization;
using ParquetSharp;

namespace jemalloc.Parquet.Tests;

/// <summary>
/// One column of a corpus file as text a row, null for a null row, read two ways: by our public reader
/// (the read a user would choose for the column's types) and by DuckDB, whose SQL renders each value in
/// the same form, so the two lists compare element by element. Integers, decimals and temporal values
/// (as counts of their unit since the epoch) are exact decimal text; floating values their round-trip
/// text; strings, binary and fixed-size values their bytes in hexadecimal.
/// </summary>
internal static class CorpusValues
{
    // Days from the Julian day number 0 to the Unix epoch, as INT96 timestamps count them.
    private const long JulianDayOfEpoch = 2_440_588;
    private const long NanosPerDay = 86_400L * 1_000_000_000;

    /// <summary>Reads the column with the reader method its types call for.</summary>
    public static string?[] ReadOurs(NativeParquetReader reader, string column)
    {
        ParquetColumnInfo info = reader.GetColumnInfo(column);
        if (info.LogicalType == LogicalTypeEnum.Decimal)
        {
            using DecimalColumn decimals = reader.ReadDecimalColumn(column);
            return Rows(decimals.Length, decimals.IsNull, decimals.ToString);
        }

        switch (info.PhysicalType)
        {
            case PhysicalType.Boolean:
                return ReadNullable<bool>(reader, column, v => v ? "true" : "false");
            case PhysicalType.Int32 when IsInt(info, 32, signed: false):
                return ReadNullable<uint>(reader, column, v => v.ToString(CultureInfo.InvariantCulture));
            case PhysicalType.Int32:
                // INT(8), INT(16), UINT(8) and UINT(16) read as int too: it holds all their values.
                return ReadNullable<int>(reader, column, v => v.ToString(CultureInfo.InvariantCulture));
            case PhysicalType.Int64 when IsInt(info, 64, signed: false):
                return ReadNullable<ulong>(reader, column, v => v.ToString(CultureInfo.InvariantCulture));
            case PhysicalType.Int64 when info.LogicalType == LogicalTypeEnum.Time && info.TimeUnit == TimeUnit.Nanos:
                // DuckDB's TIME holds microseconds: nanoseconds are compared at that resolution.
                return ReadNullable<long>(reader, column, v => Math.DivRem(v, 1000).Quotient.ToString(CultureInfo.InvariantCulture));
            case PhysicalType.Int64:
                return ReadNullable<long>(reader, column, v => v.ToString(CultureInfo.InvariantCulture));
            case PhysicalType.Int96:
                // DuckDB reads INT96 as a TIMESTAMP of microseconds: the values are compared at that resolution.
                return ReadNullable<Int96>(reader, column, v => EpochMicros(v).ToString(CultureInfo.InvariantCulture));
            case PhysicalType.Float:
                return ReadNullable<float>(reader, column, v => Text(v));
            case PhysicalType.Double:
                return ReadNullable<double>(reader, column, Text);
            case PhysicalType.FixedLenByteArray when info.LogicalType == LogicalTypeEnum.Float16:
                return ReadNullable<Half>(reader, column, v => Text((double)v));
            case PhysicalType.FixedLenByteArray:
            {
                using FixedSizeBinaryColumn values = reader.ReadFixedSizeBinaryColumn(column);
                byte[] value = new byte[values.ByteWidth];
                return Rows(values.Length, values.IsNull, row =>
                {
                    values.CopyValue(row, value);
                    return Convert.ToHexString(value);
                });
            }

            default:
            {
                using NativeStringColumn values = reader.ReadStringColumn(column);
                return Rows(values.Length, values.IsNull, row => Convert.ToHexString(values.GetBytes(row)!));
            }
        }
    }

    /// <summary>
    /// DuckDB's reading of the column, in <see cref="ReadOurs"/>'s forms; DuckDB's own exception (a file
    /// it cannot read) is passed on. The rows are in file order.
    /// </summary>
    public static string?[] ReadDuckDb(DuckDb duck, string path, string column, ParquetColumnInfo info)
    {
        string name = string.Join('.', column.Split('.').Select(part => "\"" + part.Replace("\"", "\"\"", StringComparison.Ordinal) + "\""));
        bool floating = info.PhysicalType is PhysicalType.Float or PhysicalType.Double || info.LogicalType == LogicalTypeEnum.Float16;
        string expression = floating ? $"{name}::DOUBLE" : info.LogicalType switch
        {
            LogicalTypeEnum.Decimal => $"{name}::VARCHAR",
            LogicalTypeEnum.Date => $"({name} - DATE '1970-01-01')::VARCHAR",
            LogicalTypeEnum.Time => $"{(info.TimeUnit == TimeUnit.Millis ? "epoch_ms" : "epoch_us")}(DATE '1970-01-01' + {name})::VARCHAR",
            LogicalTypeEnum.Timestamp => $"{Epoch(info.TimeUnit)}({name})::VARCHAR",
            LogicalTypeEnum.Uuid => $"upper(replace({name}::VARCHAR, '-', ''))",
            _ when info.PhysicalType == PhysicalType.Int96 => $"epoch_us({name})::VARCHAR",
            _ when info.PhysicalType is PhysicalType.ByteArray or PhysicalType.FixedLenByteArray => $"hex({name})",
            _ => $"{name}::VARCHAR",
        };
        // Arrow's test files carry GeoParquet metadata DuckDB would otherwise act on (and refuse the file for).
        duck.Execute("SET enable_geoparquet_conversion = false");
        var values = new List<string?>();
        duck.Query(
            $"SELECT file_row_number, {expression} FROM read_parquet('{path.Replace("'", "''", StringComparison.Ordinal)}', file_row_number = true) ORDER BY file_row_number",
            row =>
            {
                Assert.Equal(values.Count, row.GetInt64(0));
                values.Add(row.IsDBNull(1) ? null : floating ? Text(row.GetDouble(1)) : row.GetString(1));
            });
        return [.. values];
    }

    /// <summary>An INT96 timestamp (nanoseconds of the day, then the Julian day) as nanoseconds since the Unix epoch, past the range of a long if need be.</summary>
    public static Int128 EpochNanos(Int96 value)
    {
        long nanosOfDay = (long)(((ulong)(uint)value.B << 32) | (uint)value.A);
        return ((Int128)value.C - JulianDayOfEpoch) * NanosPerDay + nanosOfDay;
    }

    /// <summary>
    /// An INT96 timestamp as whole microseconds since the Unix epoch (rounded down), in 64 bits: a value
    /// past them wraps, as Spark's writer wrapped it when it stored a microsecond timestamp too far for
    /// nanoseconds (data/int96_from_spark.md gives the microseconds so meant).
    /// </summary>
    public static long EpochMicros(Int96 value)
    {
        Int128 nanos = EpochNanos(value);
        Int128 micros = nanos / 1000;
        return unchecked((long)(nanos % 1000 < 0 ? micros - 1 : micros));
    }

    // Round-trip text, which tells -0 from 0; every NaN is one value, as DuckDB gives it.
    private static string Text(double value) => double.IsNaN(value) ? "NaN" : value.ToString("R", CultureInfo.InvariantCulture);

    private static string Epoch(TimeUnit unit) => unit switch
    {
        TimeUnit.Millis => "epoch_ms",
        TimeUnit.Micros => "epoch_us",
        _ => "epoch_ns",
    };

    private static bool IsInt(ParquetColumnInfo info, int width, bool signed) =>
        info.LogicalType == LogicalTypeEnum.Int
        && info.LogicalTypeText.Contains(FormattableString.Invariant($"bitWidth={width}"), StringComparison.Ordinal)
        && info.LogicalTypeText.Contains(signed ? "isSigned=true" : "isSigned=false", StringComparison.Ordinal);

    private static string?[] ReadNullable<T>(NativeParquetReader reader, string column, Func<T, string> text)
        where T : unmanaged, IEquatable<T>
    {
        using NullableColumn<T> values = reader.ReadNullableColumn<T>(column);
        return Rows(values.Length, values.IsNull, row => text(values.Values[row]));
    }

    private static string?[] Rows(long length, Func<long, bool> isNull, Func<long, string> text)
    {
        var rows = new string?[length];
        for (long i = 0; i < length; i++)
        {
            rows[i] = isNull(i) ? null : text(i);
        }

        return rows;
    }
}
