namespace jemalloc.Ledger;

/// <summary>
/// An object that owns a ledger allocation and caches its accessibility in its own fields (the
/// <see cref="System.Runtime.InteropServices.SafeHandle"/>-based arrays, whose indexers check a
/// field of the object instead of the ledger's state word). The ledger tells it when the allocation
/// is invalidated behind its back, by an arena reset.
/// </summary>
internal interface IAllocationOwner
{
    /// <summary>The allocation was invalidated: every later access must throw.</summary>
    void OnInvalidated();
}
