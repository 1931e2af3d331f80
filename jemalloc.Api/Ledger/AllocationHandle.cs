using System.Runtime.CompilerServices;
using jemalloc.Ledger;

namespace jemalloc;

/// <summary>
/// A reference to one allocation recorded in the <see cref="AllocationLedger"/>: its slot number and
/// the generation the slot had when the allocation was made, in one 64-bit value.
/// </summary>
/// <remarks>
/// Eight bytes, so copying a handle (or a <see cref="FixedBuffer{T}"/>, which is nothing else) is a
/// single atomic move: a copy made while another thread overwrites the variable is one handle or the
/// other, never a mix. It holds no object references. The slot's generation changes the moment the
/// allocation is freed or invalidated, so all copies become invalid together, and a slot is retired
/// before its generation could come round again. <see langword="default"/> is never valid.
/// </remarks>
public readonly struct AllocationHandle : IEquatable<AllocationHandle>
{
    // Generation in the high half, slot in the low half: the same layout as the slot's Key word, so
    // that a check is one exclusive-or.
    internal readonly ulong Value;

    internal AllocationHandle(int slot, uint generation) => Value = (ulong)generation << 32 | (uint)slot;

    internal int Slot
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get => (int)(uint)Value;
    }

    internal uint Generation
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get => (uint)(Value >> 32);
    }

    /// <summary>Whether the allocation is still live (neither freed nor invalidated).</summary>
    public bool IsValid
    {
        get
        {
            uint generation = Generation;
            return (generation & 1) == 1 && SlotState.KeyGeneration(Volatile.Read(ref SlotTable.HotOf(Slot).Key)) == generation;
        }
    }

    /// <summary>How many <c>Acquire()</c> calls are outstanding, or -1 when the handle is no longer valid.</summary>
    public int AcquireCount
    {
        get
        {
            if ((Generation & 1) == 0)
            {
                return -1;
            }

            long state = Volatile.Read(ref SlotTable.HotOf(Slot).State);
            return SlotState.Generation(state) == Generation ? SlotState.Acquisitions(state) : -1;
        }
    }

    /// <summary>How many leases (<c>Lease()</c>, and the library's own operations in progress) are open, or -1 when the handle is no longer valid.</summary>
    public int LeaseCount
    {
        get
        {
            if ((Generation & 1) == 0)
            {
                return -1;
            }

            long state = Volatile.Read(ref SlotTable.HotOf(Slot).State);
            return SlotState.Generation(state) == Generation ? SlotState.Leases(state) : -1;
        }
    }

    /// <inheritdoc/>
    public bool Equals(AllocationHandle other) => Value == other.Value;

    /// <inheritdoc/>
    public override bool Equals(object? obj) => obj is AllocationHandle other && Equals(other);

    /// <inheritdoc/>
    public override int GetHashCode() => Value.GetHashCode();

    /// <summary>Compares two handles for identity.</summary>
    public static bool operator ==(AllocationHandle left, AllocationHandle right) => left.Equals(right);

    /// <summary>Compares two handles for identity.</summary>
    public static bool operator !=(AllocationHandle left, AllocationHandle right) => !left.Equals(right);
}
