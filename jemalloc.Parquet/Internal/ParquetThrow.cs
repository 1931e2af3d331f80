using System.Diagnostics.CodeAnalysis;

namespace jemalloc.Parquet.Internal;

/// <summary>The add-on's throws, kept out of the read and write loops so those stay small.</summary>
internal static class ParquetThrow
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
}
