using System.Runtime.CompilerServices;

namespace jemalloc;

/// <summary>
/// A reference to one allocation recorded in the <see cref="AllocationLedger"/>: the address of its
/// slot's state word and the generation the slot had when the allocation was made.
/// </summary>
/// <remarks>
/// It holds no object references, so structures that embed it stay unmanaged. Checking it is one
/// load and one compare: the state word lives in pinned memory and its high half is the slot's
/// generation, which changes the moment the allocation is freed or invalidated. Copies of a handle
/// therefore all become invalid together. <see langword="default"/> is never valid.
/// </remarks>
public readonly unsafe struct AllocationHandle : IEquatable<AllocationHandle>
{
    internal readonly long* State;
    internal readonly int Slot;
    internal readonly uint Generation;

    internal AllocationHandle(long* state, int slot, uint generation)
    {
        State = state;
        Slot = slot;
        Generation = generation;
    }

    /// <summary>Whether the allocation is still live (neither freed nor invalidated).</summary>
    public bool IsValid
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get => State != null && (uint)((ulong)*State >> 32) == Generation;
    }

    /// <summary>
    /// The hot-path check used by the structures' indexers: the same as <see cref="IsValid"/> but
    /// without the null test, so it is one 32-bit load of the generation half of the state word and
    /// one compare. Only for handles known to be non-default (a structure with a non-zero length).
    /// </summary>
    internal bool IsLive
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get => *((uint*)State + (BitConverter.IsLittleEndian ? 1 : 0)) == Generation;
    }

    /// <summary>How many acquisitions are outstanding, or -1 when the handle is no longer valid.</summary>
    public int AcquireCount
    {
        get
        {
            if (State == null)
            {
                return -1;
            }

            long state = Volatile.Read(ref *State);
            return (uint)((ulong)state >> 32) == Generation ? (int)state : -1;
        }
    }

    /// <inheritdoc/>
    public bool Equals(AllocationHandle other) => State == other.State && Generation == other.Generation;

    /// <inheritdoc/>
    public override bool Equals(object? obj) => obj is AllocationHandle other && Equals(other);

    /// <inheritdoc/>
    public override int GetHashCode() => HashCode.Combine(Slot, Generation);

    /// <summary>Compares two handles for identity.</summary>
    public static bool operator ==(AllocationHandle left, AllocationHandle right) => left.Equals(right);

    /// <summary>Compares two handles for identity.</summary>
    public static bool operator !=(AllocationHandle left, AllocationHandle right) => !left.Equals(right);
}
