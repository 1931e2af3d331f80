using System.Diagnostics.CodeAnalysis;

namespace jemalloc.Arrow.Ipc;

/// <summary>The IPC reader's and writer's throws, kept out of their loops so those stay small.</summary>
internal static class IpcThrow
{
    [DoesNotReturn]
    internal static void InvalidData(string message) => throw new InvalidDataException(message);

    [DoesNotReturn]
    internal static void NotSupported(string message) => throw new NotSupportedException(message);

    [DoesNotReturn]
    internal static void Argument(string paramName, string message) => throw new ArgumentException(message, paramName);

    [DoesNotReturn]
    internal static void InvalidOperation(string message) => throw new InvalidOperationException(message);
}
