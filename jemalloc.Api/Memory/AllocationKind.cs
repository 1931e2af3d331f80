namespace jemalloc;

/// <summary>Which high-level type made an allocation recorded in the <see cref="AllocationLedger"/>.</summary>
public enum AllocationKind
{
    /// <summary>Made through the ledger directly.</summary>
    Raw = 0,

    /// <summary>A <c>FixedBuffer&lt;T&gt;</c>.</summary>
    FixedBuffer,

    /// <summary>A <c>FixedUtf8String</c>.</summary>
    Utf8String,

    /// <summary>A <c>SafeBuffer&lt;T&gt;</c> such as <c>SafeArray&lt;T&gt;</c>.</summary>
    SafeBuffer,

    /// <summary>A <c>HugeBuffer&lt;T&gt;</c> such as <c>HugeArray&lt;T&gt;</c>.</summary>
    HugeBuffer,

    /// <summary>A block of a <c>Utf8StringStore</c>, holding many strings.</summary>
    StringStoreBlock,

    /// <summary>The growing buffer of a <c>NativeBufferWriter&lt;T&gt;</c>.</summary>
    BufferWriter,

    /// <summary>A block of a <c>JemMemoryPool</c>, rented or kept for the next rent.</summary>
    MemoryPoolBlock,

    /// <summary>
    /// The small allocation a <c>Utf8StringStore</c> made with a <c>JemArena</c>'s options keeps in that
    /// arena: each open read scope leases it, so the arena cannot be reset or disposed under a reader.
    /// </summary>
    StringStoreScopeAnchor,

    /// <summary>A segment of a <c>NativeCache</c>: many entries appended one after another.</summary>
    CacheSegment,

    /// <summary>A table of a <c>NativeCache</c>: a shard's index or its ghost table.</summary>
    CacheIndex,
}
