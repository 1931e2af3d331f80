namespace jemalloc.Records;

/// <summary>One slot of a <see cref="NativeHashIndex{TKey}"/>'s table: a key and its value plus one (0 = empty slot).</summary>
internal struct HashIndexEntry<TKey> : IEquatable<HashIndexEntry<TKey>>
    where TKey : unmanaged, IEquatable<TKey>
{
    public TKey Key;

    // Values are non-negative, so storing value + 1 lets zeroed memory mean "empty" without a
    // separate occupancy array (one cache line per probe instead of two).
    public long ValuePlusOne;

    public readonly bool Equals(HashIndexEntry<TKey> other) => ValuePlusOne == other.ValuePlusOne && Key.Equals(other.Key);

    public override readonly bool Equals(object? obj) => obj is HashIndexEntry<TKey> other && Equals(other);

    public override readonly int GetHashCode() => HashCode.Combine(Key, ValuePlusOne);
}
