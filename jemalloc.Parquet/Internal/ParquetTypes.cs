using ParquetSharp;

namespace jemalloc.Parquet.Internal;

/// <summary>How an element type maps to Parquet's physical types, for reading and for writing.</summary>
internal static class ParquetTypes
{
    /// <summary>How a column's physical values become the requested element type.</summary>
    internal enum ReadKind
    {
        /// <summary>The element has the physical value's size and bits (int, uint, long, ulong, float, double, bool, Int96): decoded straight into the column.</summary>
        Direct,

        /// <summary>An INT32 value narrowed to a 1- or 2-byte element (sbyte, byte, short, ushort): decoded into a scratch block, then narrowed.</summary>
        Narrow,
    }

    /// <summary>The physical type that holds <typeparamref name="T"/>, or <see cref="PhysicalType.Undefined"/> for an unsupported type.</summary>
    internal static PhysicalType PhysicalOf<T>()
    {
        if (typeof(T) == typeof(bool))
        {
            return PhysicalType.Boolean;
        }

        if (typeof(T) == typeof(int) || typeof(T) == typeof(uint) || typeof(T) == typeof(short) || typeof(T) == typeof(ushort)
            || typeof(T) == typeof(sbyte) || typeof(T) == typeof(byte))
        {
            return PhysicalType.Int32;
        }

        if (typeof(T) == typeof(long) || typeof(T) == typeof(ulong))
        {
            return PhysicalType.Int64;
        }

        if (typeof(T) == typeof(Int96))
        {
            return PhysicalType.Int96;
        }

        if (typeof(T) == typeof(float))
        {
            return PhysicalType.Float;
        }

        if (typeof(T) == typeof(Half))
        {
            return PhysicalType.FixedLenByteArray;
        }

        return typeof(T) == typeof(double) ? PhysicalType.Double : PhysicalType.Undefined;
    }

    /// <summary>The logical type a written column of <typeparamref name="T"/> carries, so readers see its width and sign.</summary>
    internal static LogicalType LogicalOf<T>()
    {
        if (typeof(T) == typeof(sbyte))
        {
            return LogicalType.Int(8, isSigned: true);
        }

        if (typeof(T) == typeof(byte))
        {
            return LogicalType.Int(8, isSigned: false);
        }

        if (typeof(T) == typeof(short))
        {
            return LogicalType.Int(16, isSigned: true);
        }

        if (typeof(T) == typeof(ushort))
        {
            return LogicalType.Int(16, isSigned: false);
        }

        if (typeof(T) == typeof(uint))
        {
            return LogicalType.Int(32, isSigned: false);
        }

        if (typeof(T) == typeof(Half))
        {
            return LogicalType.Float16();
        }

        return typeof(T) == typeof(ulong) ? LogicalType.Int(64, isSigned: false) : LogicalType.None();
    }

    /// <summary>Throws unless <typeparamref name="T"/> is one of the element types a column can be written from.</summary>
    /// <exception cref="NotSupportedException">It is not.</exception>
    internal static void CheckWritable<T>()
    {
        if (PhysicalOf<T>() == PhysicalType.Undefined)
        {
            ParquetThrow.NotSupported($"{typeof(T).Name} cannot be written to Parquet: the element types are bool, sbyte, byte, short, ushort, int, uint, long, ulong, Half, float, double and ParquetSharp.Int96.");
        }
    }

    /// <summary>
    /// How a column is read as <typeparamref name="T"/>: its physical type must hold <typeparamref name="T"/>
    /// and its logical type must agree with <typeparamref name="T"/>'s width and sign, so no value is
    /// silently reinterpreted (a UINT_32 column is not read as <see cref="int"/>).
    /// </summary>
    /// <exception cref="NotSupportedException"><typeparamref name="T"/> is no Parquet element type, or the column is nested (a list or map).</exception>
    /// <exception cref="ArgumentException">The column's values are not of type <typeparamref name="T"/>.</exception>
    /// <exception cref="ArgumentOutOfRangeException">ParquetSharp does not know the column's logical type (thrown by ParquetSharp).</exception>
    internal static ReadKind CheckReadable<T>(ColumnDescriptor descriptor, string column, string file, string paramName)
    {
        PhysicalType wanted = PhysicalOf<T>();
        if (wanted == PhysicalType.Undefined)
        {
            using LogicalType? declared = ByteArrayTypes.LogicalTypeOrNull(descriptor);
            ParquetThrow.NotSupported($"{typeof(T).Name} is no Parquet element type, so column '{column}' ({descriptor.PhysicalType}, logical type {ByteArrayTypes.Describe(declared)}) of '{file}' cannot be read as it: read columns as bool, sbyte, byte, short, ushort, int, uint, long, ulong, Half, float, double or ParquetSharp.Int96.");
        }

        if (descriptor.MaxRepetitionLevel > 0)
        {
            ParquetThrow.Repeated(descriptor, column, file);
        }

        PhysicalType physical = descriptor.PhysicalType;
        using LogicalType logical = descriptor.LogicalType;
        if (physical != wanted)
        {
            ParquetThrow.Argument(paramName, $"Column '{column}' of '{file}' holds {physical} values (logical type {logical}); they cannot be read as {typeof(T).Name}.");
        }

        // The Null logical type: every value is null, so any element of the physical type reads it (as nulls).
        bool fits = logical is NullLogicalType || physical switch
        {
            PhysicalType.Int32 => logical switch
            {
                IntLogicalType integer => FitsInteger<T>(integer.BitWidth, integer.IsSigned),
                NoneLogicalType or DateLogicalType or TimeLogicalType => typeof(T) == typeof(int),
                _ => false,
            },
            PhysicalType.Int64 => logical switch
            {
                IntLogicalType integer => FitsInteger<T>(integer.BitWidth, integer.IsSigned),
                NoneLogicalType or TimestampLogicalType or TimeLogicalType => typeof(T) == typeof(long),
                _ => false,
            },
            PhysicalType.FixedLenByteArray => logical is Float16LogicalType && typeof(T) == typeof(Half),
            _ => logical is NoneLogicalType,
        };
        if (!fits)
        {
            ParquetThrow.Argument(paramName, $"Column '{column}' of '{file}' holds {physical} values of logical type {logical}; they cannot be read as {typeof(T).Name} without changing their meaning.");
        }

        return typeof(T) == typeof(sbyte) || typeof(T) == typeof(byte) || typeof(T) == typeof(short) || typeof(T) == typeof(ushort)
            ? ReadKind.Narrow
            : ReadKind.Direct;
    }

    /// <summary>The values an INT32 column of an 8- or 16-bit integer logical type may hold.</summary>
    internal readonly record struct IntegerRange(int Min, int Max, string Name);

    /// <summary>
    /// The range the column's INT logical type allows its INT32 values, for an 8- or 16-bit type (whose
    /// values a malformed file can make too wide); null for any other column, where every value is one
    /// its element type holds.
    /// </summary>
    internal static IntegerRange? RangeOf(ColumnDescriptor descriptor)
    {
        if (descriptor.PhysicalType != PhysicalType.Int32)
        {
            return null;
        }

        using LogicalType logical = descriptor.LogicalType;
        return logical is IntLogicalType { BitWidth: 8 or 16 } integer
            ? integer.IsSigned
                ? new IntegerRange(-(1 << (integer.BitWidth - 1)), (1 << (integer.BitWidth - 1)) - 1, $"INT({integer.BitWidth})")
                : new IntegerRange(0, (1 << integer.BitWidth) - 1, $"UINT({integer.BitWidth})")
            : null;
    }

    // An integer column of the given width and sign is read as T when T holds every value it can
    // have: its own type, or the 32- or 64-bit type of the same physical width that holds all of them.
    private static bool FitsInteger<T>(int bitWidth, bool signed) => (bitWidth, signed) switch
    {
        (8, true) => typeof(T) == typeof(sbyte) || typeof(T) == typeof(int),
        (8, false) => typeof(T) == typeof(byte) || typeof(T) == typeof(int) || typeof(T) == typeof(uint),
        (16, true) => typeof(T) == typeof(short) || typeof(T) == typeof(int),
        (16, false) => typeof(T) == typeof(ushort) || typeof(T) == typeof(int) || typeof(T) == typeof(uint),
        (32, true) => typeof(T) == typeof(int),
        (32, false) => typeof(T) == typeof(uint),
        (64, true) => typeof(T) == typeof(long),
        (64, false) => typeof(T) == typeof(ulong),
        _ => false,
    };
}
