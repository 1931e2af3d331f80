using Apache.Arrow.Types;

namespace jemalloc.Arrow.Ipc;

/// <summary>
/// An IPC column's type: its union tag and parameters, the public <see cref="ArrowIpcType"/> it is
/// read as, and its name for messages. Parsed from a Field's type table, or made for the writer.
/// <see cref="Precision"/> and <see cref="Scale"/> are a Decimal's, <see cref="ByteWidth"/> a FixedSizeBinary's,
/// as the schema declares them (unchecked: the reads check them).
/// </summary>
internal readonly record struct IpcType(ArrowIpcType Kind, string Name, byte Code, int BitWidth, bool HasUnit, TimeUnit Unit, string? TimeZone, int Precision = 0, int Scale = 0, int ByteWidth = 0)
{
    /// <summary>The element type a column of this type is read into and written from, or <see langword="null"/> for a type without one.</summary>
    internal Type? ElementType => Kind switch
    {
        ArrowIpcType.Boolean => typeof(bool),
        ArrowIpcType.Int8 => typeof(sbyte),
        ArrowIpcType.UInt8 => typeof(byte),
        ArrowIpcType.Int16 => typeof(short),
        ArrowIpcType.UInt16 => typeof(ushort),
        ArrowIpcType.Int32 or ArrowIpcType.Date32 or ArrowIpcType.Time32 => typeof(int),
        ArrowIpcType.UInt32 => typeof(uint),
        ArrowIpcType.Int64 or ArrowIpcType.Date64 or ArrowIpcType.Timestamp or ArrowIpcType.Time64 or ArrowIpcType.Duration => typeof(long),
        ArrowIpcType.UInt64 => typeof(ulong),
        ArrowIpcType.HalfFloat => typeof(Half),
        ArrowIpcType.Float => typeof(float),
        ArrowIpcType.Double => typeof(double),
        _ => null,
    };

    /// <summary>Whether the values are strings or byte strings (an offsets buffer and a data buffer).</summary>
    internal bool IsVariableBinary => Kind is ArrowIpcType.Utf8 or ArrowIpcType.Binary or ArrowIpcType.LargeUtf8 or ArrowIpcType.LargeBinary;

    /// <summary>The plain numeric or boolean type whose values have <typeparamref name="T"/>'s layout.</summary>
    /// <exception cref="NotSupportedException"><typeparamref name="T"/> is no Arrow element type.</exception>
    internal static IpcType Of<T>()
    {
        if (typeof(T) == typeof(bool))
        {
            return new(ArrowIpcType.Boolean, "Bool", IpcTypeCode.Bool, 1, false, default, null);
        }

        (ArrowIpcType kind, string name, int bits, byte code) = typeof(T) == typeof(sbyte) ? (ArrowIpcType.Int8, "Int8", 8, IpcTypeCode.Int)
            : typeof(T) == typeof(byte) ? (ArrowIpcType.UInt8, "UInt8", 8, IpcTypeCode.Int)
            : typeof(T) == typeof(short) ? (ArrowIpcType.Int16, "Int16", 16, IpcTypeCode.Int)
            : typeof(T) == typeof(ushort) ? (ArrowIpcType.UInt16, "UInt16", 16, IpcTypeCode.Int)
            : typeof(T) == typeof(int) ? (ArrowIpcType.Int32, "Int32", 32, IpcTypeCode.Int)
            : typeof(T) == typeof(uint) ? (ArrowIpcType.UInt32, "UInt32", 32, IpcTypeCode.Int)
            : typeof(T) == typeof(long) ? (ArrowIpcType.Int64, "Int64", 64, IpcTypeCode.Int)
            : typeof(T) == typeof(ulong) ? (ArrowIpcType.UInt64, "UInt64", 64, IpcTypeCode.Int)
            : typeof(T) == typeof(Half) ? (ArrowIpcType.HalfFloat, "HalfFloat", 16, IpcTypeCode.FloatingPoint)
            : typeof(T) == typeof(float) ? (ArrowIpcType.Float, "Float", 32, IpcTypeCode.FloatingPoint)
            : typeof(T) == typeof(double) ? (ArrowIpcType.Double, "Double", 64, IpcTypeCode.FloatingPoint)
            : throw new NotSupportedException($"{typeof(T).Name} is no Arrow element type: the element types are bool, sbyte, byte, short, ushort, int, uint, long, ulong, Half, float and double.");
        return new(kind, name, code, bits, false, default, null);
    }

    internal static IpcType Strings(bool utf8, bool large) => (utf8, large) switch
    {
        (true, false) => new(ArrowIpcType.Utf8, "Utf8", IpcTypeCode.Utf8, 32, false, default, null),
        (false, false) => new(ArrowIpcType.Binary, "Binary", IpcTypeCode.Binary, 32, false, default, null),
        (true, true) => new(ArrowIpcType.LargeUtf8, "LargeUtf8", IpcTypeCode.LargeUtf8, 64, false, default, null),
        _ => new(ArrowIpcType.LargeBinary, "LargeBinary", IpcTypeCode.LargeBinary, 64, false, default, null),
    };

    internal static IpcType Decimal(int precision, int scale, int bits) =>
        new(bits == 128 ? ArrowIpcType.Decimal128 : ArrowIpcType.Other, $"Decimal({precision}, {scale}, {bits})", IpcTypeCode.Decimal, bits, false, default, null, precision, scale);

    internal static IpcType FixedSizeBinary(int byteWidth) =>
        new(ArrowIpcType.FixedSizeBinary, $"FixedSizeBinary({byteWidth})", IpcTypeCode.FixedSizeBinary, 0, false, default, null, ByteWidth: byteWidth);

    internal static IpcType Date(bool days) => days
        ? new(ArrowIpcType.Date32, "Date32", IpcTypeCode.Date, 32, false, default, null)
        : new(ArrowIpcType.Date64, "Date64", IpcTypeCode.Date, 64, false, default, null);

    internal static IpcType Time(TimeUnit unit)
    {
        bool wide = unit is TimeUnit.Microsecond or TimeUnit.Nanosecond;
        return new(wide ? ArrowIpcType.Time64 : ArrowIpcType.Time32, $"{(wide ? "Time64" : "Time32")}({unit})", IpcTypeCode.Time, wide ? 64 : 32, true, unit, null);
    }

    internal static IpcType Timestamp(TimeUnit unit, string? timeZone) =>
        new(ArrowIpcType.Timestamp, timeZone is null ? $"Timestamp({unit})" : $"Timestamp({unit}, {timeZone})", IpcTypeCode.Timestamp, 64, true, unit, timeZone);

    internal static IpcType Duration(TimeUnit unit) =>
        new(ArrowIpcType.Duration, $"Duration({unit})", IpcTypeCode.Duration, 64, true, unit, null);

    /// <summary>Reads the type of a Field: its union tag and the table of its parameters (absent: their defaults).</summary>
    /// <exception cref="InvalidDataException">The table is malformed.</exception>
    internal static IpcType Parse(byte code, FlatTable? table, string what)
    {
        switch (code)
        {
            case IpcTypeCode.Int:
            {
                int bits = table?.GetInt32(0, 0, what) ?? 0;
                bool signed = table?.GetBool(1, false, what) ?? false;
                ArrowIpcType kind = (bits, signed) switch
                {
                    (8, true) => ArrowIpcType.Int8,
                    (8, false) => ArrowIpcType.UInt8,
                    (16, true) => ArrowIpcType.Int16,
                    (16, false) => ArrowIpcType.UInt16,
                    (32, true) => ArrowIpcType.Int32,
                    (32, false) => ArrowIpcType.UInt32,
                    (64, true) => ArrowIpcType.Int64,
                    (64, false) => ArrowIpcType.UInt64,
                    // The format's Int is 8, 16, 32 or 64 bits: any other width is a malformed schema, not a type to refuse.
                    _ => throw new InvalidDataException($"{what} is an Int of {bits} bits; the Arrow format's integers are 8, 16, 32 or 64 bits."),
                };
                return new(kind, kind.ToString(), code, bits, false, default, null);
            }

            case IpcTypeCode.FloatingPoint:
            {
                short precision = table?.GetInt16(0, 0, what) ?? 0;
                ArrowIpcType kind = precision switch { 0 => ArrowIpcType.HalfFloat, 1 => ArrowIpcType.Float, 2 => ArrowIpcType.Double, _ => ArrowIpcType.Other };
                return new(kind, kind == ArrowIpcType.Other ? $"FloatingPoint(precision {precision})" : kind.ToString(), code, 16 << Math.Clamp((int)precision, 0, 2), false, default, null);
            }

            case IpcTypeCode.Bool:
                return new(ArrowIpcType.Boolean, "Bool", code, 1, false, default, null);
            case IpcTypeCode.Null:
                return new(ArrowIpcType.Null, "Null", code, 0, false, default, null);
            case IpcTypeCode.Utf8:
                return new(ArrowIpcType.Utf8, "Utf8", code, 0, false, default, null);
            case IpcTypeCode.Binary:
                return new(ArrowIpcType.Binary, "Binary", code, 0, false, default, null);
            case IpcTypeCode.LargeUtf8:
                return new(ArrowIpcType.LargeUtf8, "LargeUtf8", code, 0, false, default, null);
            case IpcTypeCode.LargeBinary:
                return new(ArrowIpcType.LargeBinary, "LargeBinary", code, 0, false, default, null);
            case IpcTypeCode.Date:
            {
                short unit = table?.GetInt16(0, 1, what) ?? 1;
                return unit switch
                {
                    0 => Date(days: true),
                    1 => Date(days: false),
                    _ => new(ArrowIpcType.Other, $"Date(unit {unit})", code, 0, false, default, null),
                };
            }

            case IpcTypeCode.Time:
            {
                short unit = table?.GetInt16(0, 1, what) ?? 1;
                int bits = table?.GetInt32(1, 32, what) ?? 32;
                bool valid = (unit, bits) is (0 or 1, 32) or (2 or 3, 64);
                return valid ? Time((TimeUnit)unit) : new(ArrowIpcType.Other, $"Time(unit {unit}, {bits} bits)", code, bits, false, default, null);
            }

            case IpcTypeCode.Timestamp:
            {
                short unit = table?.GetInt16(0, 0, what) ?? 0;
                string? zone = table?.GetString(1, what);
                return unit is >= 0 and <= 3 ? Timestamp((TimeUnit)unit, zone) : new(ArrowIpcType.Other, $"Timestamp(unit {unit})", code, 64, false, default, zone);
            }

            case IpcTypeCode.Duration:
            {
                short unit = table?.GetInt16(0, 1, what) ?? 1;
                return unit is >= 0 and <= 3 ? Duration((TimeUnit)unit) : new(ArrowIpcType.Other, $"Duration(unit {unit})", code, 64, false, default, null);
            }

            case IpcTypeCode.Decimal:
            {
                int precision = table?.GetInt32(0, 0, what) ?? 0;
                int scale = table?.GetInt32(1, 0, what) ?? 0;
                int bits = table?.GetInt32(2, 128, what) ?? 128;
                return Decimal(precision, scale, bits);
            }

            case IpcTypeCode.FixedSizeBinary:
                return FixedSizeBinary(table?.GetInt32(0, 0, what) ?? 0);

            default:
                return new(ArrowIpcType.Other, IpcTypeCode.NameOf(code), code, 0, false, default, null);
        }
    }

    /// <summary>The Field's type table for this type, as the writer writes it.</summary>
    internal FlatObject ToFlat()
    {
        FlatObject table = FlatObject.Table();
        switch (Code)
        {
            case IpcTypeCode.Int:
                table.Scalar(0, 4, BitWidth).Scalar(1, 1, Kind is ArrowIpcType.Int8 or ArrowIpcType.Int16 or ArrowIpcType.Int32 or ArrowIpcType.Int64 ? 1 : 0);
                break;
            case IpcTypeCode.FloatingPoint:
                table.Scalar(0, 2, Kind switch { ArrowIpcType.HalfFloat => 0, ArrowIpcType.Float => 1, _ => 2 });
                break;
            case IpcTypeCode.Date:
                table.Scalar(0, 2, Kind == ArrowIpcType.Date32 ? 0 : 1);
                break;
            case IpcTypeCode.Time:
                table.Scalar(0, 2, (short)Unit).Scalar(1, 4, BitWidth);
                break;
            case IpcTypeCode.Timestamp:
                table.Scalar(0, 2, (short)Unit);
                if (TimeZone is not null)
                {
                    table.Reference(1, FlatObject.String(TimeZone));
                }

                break;
            case IpcTypeCode.Duration:
                table.Scalar(0, 2, (short)Unit);
                break;
            case IpcTypeCode.Decimal:
                table.Scalar(0, 4, Precision).Scalar(1, 4, Scale).Scalar(2, 4, BitWidth);
                break;
            case IpcTypeCode.FixedSizeBinary:
                table.Scalar(0, 4, ByteWidth);
                break;
        }

        return table;
    }
}
