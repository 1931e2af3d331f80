using System.Runtime.CompilerServices;
namespace jemalloc.Internal;

/// <summary>
/// The range and destination checks of the structures' bulk operations (copies, slices, scans), on
/// lengths only. The indexers keep their own one-compare checks; here one call is negligible.
/// </summary>
internal static class RangeGuard
{
    /// <summary>Throws unless <c>[start, start + count)</c> lies inside a structure of <paramref name="length"/> elements.</summary>
    /// <param name="start">The first index of the range.</param>
    /// <param name="count">The number of elements in the range.</param>
    /// <param name="length">The number of elements of the structure.</param>
    /// <param name="startParamName">The argument named in the exception when the start itself is outside the structure.</param>
    /// <param name="countParamName">The argument named when the start is inside but the count is negative or runs past the end.</param>
    /// <param name="structureName">What the structure is called in the message ("array", "buffer").</param>
    /// <exception cref="ArgumentOutOfRangeException">The range is not inside the structure.</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static void CheckRange(int start, int count, int length, string startParamName, string countParamName, string structureName)
    {
        if ((ulong)(uint)start + (uint)count > (uint)length)
        {
            ThrowRangeOutside(start, start, count, length, startParamName, countParamName, structureName);
        }
    }

    /// <inheritdoc cref="CheckRange(int, int, int, string, string, string)"/>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static void CheckRange(long start, int count, long length, string startParamName, string countParamName, string structureName)
    {
        if (start < 0 || count < 0 || start > length - count)
        {
            ThrowRangeOutside(start, start, count, length, startParamName, countParamName, structureName);
        }
    }

    /// <summary>Throws unless a destination of <paramref name="destinationLength"/> elements can take all <paramref name="length"/> elements.</summary>
    /// <exception cref="ArgumentException">The destination is shorter than the structure.</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static void CheckDestination(int destinationLength, long length, string structureName)
    {
        if (destinationLength < length)
        {
            ThrowHelper.ThrowArgument("destination", $"The destination has {destinationLength} elements; the {structureName} has {length}.");
        }
    }

    // Out of line: only the failing path formats the message. The start is boxed at the (never-taken) call,
    // so the exception's ActualValue keeps the caller's index type. The argument named is the one that
    // is wrong: the start if it lies outside the structure, otherwise the count.
    [System.Diagnostics.CodeAnalysis.DoesNotReturn, MethodImpl(MethodImplOptions.NoInlining)]
    private static void ThrowRangeOutside(object boxedStart, long start, int count, long length, string startParamName, string countParamName, string structureName)
    {
        string message = $"The range [{boxedStart}, {boxedStart}+{count}) is not inside the {structureName} of length {length}.";
        if (start < 0 || start > length)
        {
            ThrowHelper.ThrowArgumentOutOfRange(startParamName, boxedStart, message);
        }

        ThrowHelper.ThrowArgumentOutOfRange(countParamName, count, message);
    }
}
