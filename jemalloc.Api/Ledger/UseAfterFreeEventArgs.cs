namespace jemalloc;

/// <summary>
/// Checked mode found that a freed block was written to while it was in quarantine: some code used a
/// structure after it was freed (typically an access that raced the free on another thread).
/// </summary>
public sealed class UseAfterFreeEventArgs : EventArgs
{
    internal UseAfterFreeEventArgs(nuint size, AllocationKind kind, Type? elementType, long offset)
    {
        Size = size;
        Kind = kind;
        ElementType = elementType;
        Offset = offset;
    }

    /// <summary>The size of the freed block in bytes.</summary>
    public nuint Size { get; }

    /// <summary>The kind of structure the block belonged to.</summary>
    public AllocationKind Kind { get; }

    /// <summary>The structure's element type, when known.</summary>
    public Type? ElementType { get; }

    /// <summary>The offset in bytes of the first byte found changed.</summary>
    public long Offset { get; }

    /// <inheritdoc/>
    public override string ToString() =>
        $"A {Kind}{(ElementType is null ? "" : $"<{ElementType.Name}>")} of {Size:N0} bytes was written to after it was freed (first changed byte at offset {Offset:N0}).";
}
