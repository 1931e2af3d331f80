using Apache.Arrow.Types;

namespace jemalloc.Arrow.Internal;

/// <summary>The Arrow primitive types whose values have an element type's layout.</summary>
internal static class ArrowTypes
{
    /// <exception cref="NotSupportedException"><typeparamref name="T"/> has no Arrow primitive type of its layout.</exception>
    internal static IArrowType Of<T>()
    {
        IArrowType? type = typeof(T) == typeof(sbyte) ? Int8Type.Default
            : typeof(T) == typeof(byte) ? UInt8Type.Default
            : typeof(T) == typeof(short) ? Int16Type.Default
            : typeof(T) == typeof(ushort) ? UInt16Type.Default
            : typeof(T) == typeof(int) ? Int32Type.Default
            : typeof(T) == typeof(uint) ? UInt32Type.Default
            : typeof(T) == typeof(long) ? Int64Type.Default
            : typeof(T) == typeof(ulong) ? UInt64Type.Default
            : typeof(T) == typeof(Half) ? HalfFloatType.Default
            : typeof(T) == typeof(float) ? FloatType.Default
            : typeof(T) == typeof(double) ? DoubleType.Default
            : null;
        if (type is null)
        {
            throw new NotSupportedException($"{typeof(T).Name} has no Arrow primitive type of the same layout: the element types are sbyte, byte, short, ushort, int, uint, long, ulong, Half, float and double (Arrow's booleans are bits, not bytes).");
        }

        return type;
    }
}
