using jemalloc.Internal;

namespace jemalloc.Mallctl;

/// <summary>
/// Orders structure allocations in arenas no <see cref="JemArena"/> owns (an index from
/// <c>arenas.create</c>, or an automatic arena) against <c>arena.&lt;i&gt;.reset</c>/<c>destroy</c>
/// through mallctl. The policy lets such a reset through only when the ledger holds no structure in
/// the arena; without this gate a structure allocated between that scan and jemalloc's reset would
/// keep its handle valid over freed memory. A <see cref="JemArena"/> has a gate of its own.
/// </summary>
/// <remarks>
/// Allocations share the gate (a read lock, only on this rare path: flags that name an arena with no
/// account); a reset or destroy holds it alone from the scan to the end of jemalloc's call.
/// </remarks>
internal static class UnownedArenaGate
{
    private static readonly ReaderWriterLockSlim Gate = new(LockRecursionPolicy.NoRecursion);

    /// <summary>Enters for an allocation in arena <paramref name="arena"/>; <see cref="ExitAllocation"/> once it is recorded in the ledger.</summary>
    /// <exception cref="ArgumentException">The arena was destroyed since the flags were checked.</exception>
    internal static void EnterAllocation(uint arena)
    {
        Gate.EnterReadLock();
        if (!ArenaDirectory.Exists(arena))
        {
            Gate.ExitReadLock();
            ThrowHelper.ThrowArgument("options", $"Arena {arena} was destroyed while the allocation was starting; nothing was allocated.");
        }
    }

    /// <summary>Leaves after an allocation entered with <see cref="EnterAllocation"/>.</summary>
    internal static void ExitAllocation() => Gate.ExitReadLock();

    /// <summary>Enters for a mallctl reset or destroy: from before the policy's scan of the ledger to after jemalloc's call.</summary>
    internal static void EnterReset() => Gate.EnterWriteLock();

    /// <summary>Leaves after <see cref="EnterReset"/>.</summary>
    internal static void ExitReset() => Gate.ExitWriteLock();

    /// <summary>Whether a mallctl call on <paramref name="target"/> is a reset or destroy that must hold the gate.</summary>
    internal static bool GuardsCall(in MallctlTarget target) =>
        target.Pattern is "arena.{i}.reset" or "arena.{i}.destroy";
}
