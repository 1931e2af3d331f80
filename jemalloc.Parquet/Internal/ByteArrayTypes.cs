using ParquetSharp;

namespace jemalloc.Parquet.Internal;

/// <summary>Which BYTE_ARRAY columns read into a <see cref="NativeStringColumn"/>, and as text or binary.</summary>
internal static class ByteArrayTypes
{
    /// <summary>
    /// Whether the column's values are UTF-8 text (STRING, ENUM, JSON) rather than binary (no logical
    /// type, BSON, or one this version of ParquetSharp does not know, which is read as bytes as other
    /// readers do).
    /// </summary>
    /// <exception cref="NotSupportedException">The column is repeated (a list or map).</exception>
    /// <exception cref="ArgumentException">The column is not BYTE_ARRAY, or is a DECIMAL.</exception>
    internal static bool CheckReadableAsStrings(ColumnDescriptor descriptor, string column, string file, string paramName)
    {
        if (descriptor.MaxRepetitionLevel > 0)
        {
            ParquetThrow.Repeated(descriptor, column, file);
        }

        PhysicalType physical = descriptor.PhysicalType;
        LogicalType? logical = LogicalTypeOrNull(descriptor);
        try
        {
            if (physical != PhysicalType.ByteArray)
            {
                ParquetThrow.Argument(paramName, $"Column '{column}' of '{file}' holds {physical} values ({Describe(logical)}), not BYTE_ARRAY strings or binary.");
            }

            if (logical is DecimalLogicalType)
            {
                ParquetThrow.Argument(paramName, $"Column '{column}' of '{file}' holds BYTE_ARRAY values of logical type {logical}: read it with ReadDecimalColumn.");
            }

            return logical is StringLogicalType or EnumLogicalType or JsonLogicalType;
        }
        finally
        {
            logical?.Dispose();
        }
    }

    /// <summary>A logical type as the messages name it ("unknown" for one ParquetSharp cannot describe).</summary>
    internal static string Describe(LogicalType? logical) => logical?.ToString() ?? "a logical type unknown to this version of Parquet";

    /// <summary>The column's logical type, or <see langword="null"/> for one newer than ParquetSharp knows (for which it throws): such a column's bytes are still bytes.</summary>
    internal static LogicalType? LogicalTypeOrNull(ColumnDescriptor descriptor)
    {
        try
        {
            return descriptor.LogicalType;
        }
        catch (ArgumentOutOfRangeException)
        {
            return null;
        }
    }
}
