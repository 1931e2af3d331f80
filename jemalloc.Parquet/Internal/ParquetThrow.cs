using System.Diagnostics.CodeAnalysis;
using System.Globalization;
using System.Text.RegularExpressions;
using ParquetSharp;

namespace jemalloc.Parquet.Internal;

/// <summary>The add-on's throws, kept out of the read and write loops so those stay small.</summary>
internal static partial class ParquetThrow
{
    [DoesNotReturn]
    internal static void Argument(string paramName, string message) => throw new ArgumentException(message, paramName);

    [DoesNotReturn]
    internal static void ArgumentOutOfRange(string paramName, object? value, string message) =>
        throw new ArgumentOutOfRangeException(paramName, value, message);

    [DoesNotReturn]
    internal static void InvalidOperation(string message) => throw new InvalidOperationException(message);

    [DoesNotReturn]
    internal static void NotSupported(string message) => throw new NotSupportedException(message);

    [DoesNotReturn]
    internal static void InvalidData(string message) => throw new InvalidDataException(message);

    [DoesNotReturn]
    internal static void ObjectDisposed(string typeName) => throw new ObjectDisposedException(typeName);

    /// <summary>A repeated column (in a list or map), which no read takes: named with its types and the file.</summary>
    [DoesNotReturn]
    internal static void Repeated(ColumnDescriptor descriptor, string column, string file)
    {
        using LogicalType? logical = ByteArrayTypes.LogicalTypeOrNull(descriptor);
        throw new NotSupportedException($"Column '{column}' ({descriptor.PhysicalType}, logical type {ByteArrayTypes.Describe(logical)}) of '{file}' is repeated (a list or map); only flat columns can be read into native columns.");
    }

    /// <summary>A column read as one without nulls has a null in the batch from <paramref name="firstRow"/>: names the first null row.</summary>
    [DoesNotReturn]
    internal static unsafe void NullFound(string where, long firstRow, short* levels, short maxDefinition, int count)
    {
        long at = firstRow;
        for (int i = 0; i < count; i++)
        {
            if (levels[i] != maxDefinition)
            {
                at = firstRow + i;
                break;
            }
        }

        throw new InvalidOperationException($"The {where} has a null at row {at:N0}: read it with ReadNullableColumn.");
    }

    /// <summary>
    /// Whether <paramref name="e"/> is one ParquetSharp throws for what a file holds: its own
    /// <see cref="ParquetException"/>, or <see cref="ArgumentOutOfRangeException"/> for an enumeration
    /// value (a logical type, an encoding) newer than it.
    /// </summary>
    internal static bool IsParquetSharpError(Exception e) => e is ParquetException or ArgumentOutOfRangeException;

    /// <summary>A file ParquetSharp cannot open: its footer or schema is malformed.</summary>
    internal static InvalidDataException Unreadable(string path, Exception inner) =>
        new($"'{path}' is not a readable Parquet file: {inner.Message}", inner);

    /// <summary>
    /// A read whose blocks cannot be allocated (the allocator's message, inside, says how many bytes and
    /// what was available): named with the file and column, whose footer may declare more rows than the file holds.
    /// An arena's budget keeps its own exception, which callers catch by type.
    /// </summary>
    [SuppressMessage("Usage", "CA2201:Do not raise reserved exception types", Justification = "The allocator's own exception, kept as the inner one: a failed allocation stays an OutOfMemoryException.")]
    internal static OutOfMemoryException CannotHold(string path, string column, OutOfMemoryException inner) =>
        new($"Column '{column}' of '{path}' cannot be read into memory: {inner.Message}", inner);

    /// <summary>A column whose logical type ParquetSharp cannot represent.</summary>
    internal static InvalidDataException UnknownType(string path, string column, PhysicalType physical, Exception inner) =>
        new($"Column '{column}' ({physical}) of '{path}' has a logical type ParquetSharp does not know, so it cannot be read: {inner.Message}", inner);

    /// <summary>
    /// A page ParquetSharp could not decode, or that failed its checksum; <paramref name="where"/> names
    /// the column, its types and the file. The page's number within the row group's chunk is named
    /// where ParquetSharp's message gives it; otherwise the first row of the batch being read.
    /// </summary>
    internal static InvalidDataException DecodeFailed(string where, int rowGroup, long row, ParquetException inner)
    {
        Match page = PageOrdinal().Match(inner.Message);
        string at = page.Success
            ? string.Create(CultureInfo.InvariantCulture, $"page {page.Groups[1].Value} of row group {rowGroup}")
            : string.Create(CultureInfo.InvariantCulture, $"row group {rowGroup}, in the pages from row {row:N0}");
        string message = inner.Message.Contains("CRC", StringComparison.Ordinal)
            ? $"The {where} fails its page checksum at {at}: the file is damaged (ParquetReadOptions.VerifyPageChecksums turns the check off). {inner.Message}"
            : $"The {where} cannot be decoded at {at}: {inner.Message}";
        return new InvalidDataException(message, inner);
    }

    // Arrow's Parquet reader numbers a column chunk's pages in its CRC message ("page_ordinal #3").
    [GeneratedRegex(@"page_ordinal #?(\d+)", RegexOptions.CultureInvariant)]
    private static partial Regex PageOrdinal();
}
