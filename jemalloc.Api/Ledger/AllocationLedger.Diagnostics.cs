using System.Runtime.CompilerServices;
using System.Collections.Concurrent;
using System.Diagnostics;
using System.Reflection;
using jemalloc.Ledger;
using jemalloc.Memory;

namespace jemalloc;

public static partial class AllocationLedger
{
    private static readonly ConcurrentDictionary<int, StackTrace> StackTraces = new();

    // Set before the first trace is recorded, never cleared. Every free asks whether its slot has a
    // trace to forget; ConcurrentDictionary.IsEmpty takes all of the dictionary's locks when it is
    // empty (the usual case): a lock round trip on every free for nothing.
    private static volatile bool s_stackTracesRecorded;

    /// <summary>
    /// When <see langword="true"/>, each new allocation records the stack trace that made it, shown by
    /// <see cref="Snapshot"/>. Off by default: it costs far more than the allocation itself, and it is
    /// the only per-allocation record the garbage collector sees.
    /// </summary>
    public static bool CaptureStackTraces { get; set; }

    /// <summary>The number of live allocations.</summary>
    public static long LiveCount
    {
        get
        {
            long count = 0;
            ForEachLive((in LiveAllocation _) => count++);
            return count;
        }
    }

    /// <summary>The total requested bytes of the live allocations.</summary>
    public static long LiveBytes
    {
        get
        {
            long bytes = 0;
            ForEachLive((in LiveAllocation a) => bytes += (long)a.Size);
            return bytes;
        }
    }

    /// <summary>Lists the live allocations, e.g. to find a leak. A moment's picture: allocations come and go while it is taken.</summary>
    public static IReadOnlyList<AllocationInfo> Snapshot()
    {
        var list = new List<AllocationInfo>();
        ForEachLive((in LiveAllocation a) => list.Add(new AllocationInfo(
            a.Address,
            a.Size,
            a.Kind,
            ElementTypes.TypeOf(a.ElementType),
            (uint)a.Flags >> MallocxFlags.ArenaShift is var arenaPlusOne and not 0 ? arenaPlusOne - 1 : null,
            SlotState.Acquisitions(a.State),
            StackTraces.TryGetValue(a.Slot, out StackTrace? trace) ? trace.ToString() : null)));
        return list;
    }

    // Called while CaptureStackTraces is on; the caller reads the flag, so that the allocation path
    // makes no call when it is off.
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void RecordStackTrace(int slot)
    {
        s_stackTracesRecorded = true;

        // Skip this library's frames by their assembly, not by a count: the JIT inlines the
        // allocation path once it tiers up, and a fixed count would then skip the caller's frame.
        StackFrame[] frames = new StackTrace(1, fNeedFileInfo: true).GetFrames();
        int first = 0;
        while (first < frames.Length - 1 && IsThisLibrary(frames[first]))
        {
            first++;
        }

        StackTraces[slot] = new StackTrace(frames[first..]);
    }

    private static readonly string LibraryName = typeof(AllocationLedger).Assembly.GetName().Name!;

    private static bool IsThisLibrary(StackFrame frame) =>
        DiagnosticMethodInfo.Create(frame)?.DeclaringAssemblyName is { } assembly
        && new AssemblyName(assembly).Name == LibraryName;

    private static void ForgetStackTrace(int slot)
    {
        // A trace recorded for this slot was recorded before its handle was published, so
        // before the flag could be read here as false.
        if (s_stackTracesRecorded)
        {
            _ = StackTraces.TryRemove(slot, out _);
        }
    }

    private readonly record struct LiveAllocation(int Slot, nint Address, nuint Size, int Flags, AllocationKind Kind, int ElementType, long State);

    private delegate void LiveAllocationVisitor(in LiveAllocation allocation);

    private static void ForEachLive(LiveAllocationVisitor visit)
    {
        int slots = SlotTable.HandedOut;
        for (int slot = 0; slot < slots; slot++)
        {
            ref HotSlot hot = ref SlotTable.HotOf(slot);
            long state = Volatile.Read(ref hot.State);
            if (!SlotState.IsLive(state))
            {
                continue;
            }

            ref ColdSlot cold = ref SlotTable.ColdOf(slot);
            var allocation = new LiveAllocation(slot, hot.Pointer, hot.Size, cold.Flags, cold.Kind, cold.ElementType, state);
            // Count it only if the slot did not change hands while it was read, and only real memory.
            if (allocation.Kind != LeaseTokenKind && SlotState.Generation(Volatile.Read(ref hot.State)) == SlotState.Generation(state))
            {
                visit(in allocation);
            }
        }
    }
}
