namespace jemalloc.Arrow.Ipc;

/// <summary>A vector of a <see cref="FlatBuffer"/>, already checked to lie inside it: its elements' start, count and size.</summary>
internal readonly struct FlatVector
{
    private readonly FlatBuffer _buffer;

    internal FlatVector(FlatBuffer buffer, int start, int count, int elementSize)
    {
        _buffer = buffer;
        Start = start;
        Count = count;
        ElementSize = elementSize;
    }

    internal int Start { get; }

    internal int Count { get; }

    internal int ElementSize { get; }

    /// <summary>The position of element <paramref name="index"/> (a struct's first byte, or a scalar).</summary>
    internal int PositionOf(int index) => Start + (index * ElementSize);

    /// <summary>The table element <paramref name="index"/> points at.</summary>
    internal FlatTable TableAt(int index, string what) => _buffer.TableAt(_buffer.Deref(PositionOf(index), what), what);

    /// <summary>A 64-bit field at <paramref name="offset"/> in struct element <paramref name="index"/>.</summary>
    internal long Int64At(int index, int offset, string what) => _buffer.Int64At(PositionOf(index) + offset, what);

    /// <summary>A 32-bit field at <paramref name="offset"/> in struct element <paramref name="index"/>.</summary>
    internal int Int32At(int index, int offset, string what) => _buffer.Int32At(PositionOf(index) + offset, what);
}
