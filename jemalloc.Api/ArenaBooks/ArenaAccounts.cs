using System.Diagnostics;
using System.Runtime.CompilerServices;
using jemalloc.HugePages;
using jemalloc.Interop;
using jemalloc.Mallctl;

namespace jemalloc.ArenaBooks;

/// <summary>
/// The <see cref="ArenaAccount"/> of every arena made by a <see cref="JemArena"/>, indexed by
/// jemalloc arena index, and the two hooks the <see cref="AllocationLedger"/> calls so that a
/// structure allocated in such an arena counts against its budget and never races a reset.
/// </summary>
/// <remarks>
/// Finding an account is one array load: allocations whose flags name no arena (the common case)
/// cost a shift and a compare.
/// </remarks>
internal static class ArenaAccounts
{
    // MALLOCX_ARENA keeps (index + 1) in the 12 bits above bit 20, so 4096 entries cover every index.
    private static readonly ArenaAccount?[] Accounts = new ArenaAccount?[1 << (32 - MallocxFlags.ArenaShift)];

    /// <summary>The account of the arena named by <paramref name="flags"/>, if a <see cref="JemArena"/> made it.</summary>
    internal static ArenaAccount? Find(int flags)
    {
        uint arenaPlusOne = (uint)flags >> MallocxFlags.ArenaShift;
        return arenaPlusOne == 0 ? null : Volatile.Read(ref Accounts[arenaPlusOne - 1]);
    }

    /// <summary>The account of arena <paramref name="arena"/>, if a <see cref="JemArena"/> made it.</summary>
    internal static ArenaAccount? FindByIndex(uint arena) =>
        arena < (uint)Accounts.Length ? Volatile.Read(ref Accounts[arena]) : null;

    /// <summary>
    /// Gives a new account under <paramref name="budget"/> bytes (<see cref="ArenaAccount.Unlimited"/> for
    /// none) an arena, and records both: an arena a disposed <see cref="JemArena"/> left in the
    /// <see cref="ArenaPool"/> (reset, purged, every setting restored to a fresh arena's), or else a new
    /// one (<c>arenas.create</c>, refused before jemalloc runs out of indices).
    /// </summary>
    /// <exception cref="MallctlException">jemalloc could not create another arena (it has at most 4095); nothing was created or recorded.</exception>
    internal static ArenaAccount Create(long budget)
    {
        if (ArenaPool.TryTake() is { } previous)
        {
            var reused = new ArenaAccount(previous.Index, budget, previous.EndCounts);
            Register(reused);
            return reused;
        }

        return CreateArena(budget);
    }

    private static unsafe ArenaAccount CreateArena(long budget)
    {
        const string Key = "arenas.create";
        ArenaDirectory.ThrowIfFull(Key);
        uint index = 0;
        nuint length = sizeof(uint);
        int result = MallctlClient.Native(Key, &index, &length, null, 0);
        if (result != 0)
        {
            throw new MallctlException(Key, (MallctlError)result, "jemalloc could not create another arena.");
        }

        ArenaAccount account;
        try
        {
            ArenaPool.NoteFresh(index);
            account = new ArenaAccount(index, budget);
        }
        catch
        {
            // Nothing refers to the new arena yet: give it back rather than leak it.
            _ = MallctlClient.Native($"arena.{index}.destroy", null, null, null, 0);
            throw;
        }

        HugePageAdvisor.ForgetArena(index);
        Register(account);
        ArenaDirectory.MarkCreated(index);
        return account;
    }

    /// <summary>Records the account of a newly created arena, replacing that of a destroyed one at the same index.</summary>
    /// <remarks>
    /// It also tells the mallctl policy, a lower layer, how to ask whether an arena belongs to a
    /// <see cref="JemArena"/> (the same hook each time): until an account is recorded none does, so the
    /// policy needs no answer before.
    /// </remarks>
    internal static void Register(ArenaAccount account)
    {
        Debug.Assert(Accounts[account.Index] is null or { IsDestroyed: true });
        MallctlPolicy.RegisterArenaBooks(BelongsToLiveArena);
        ArenaDirectory.RegisterSpareArenas(ArenaPool.DestroyOne);
        Volatile.Write(ref Accounts[account.Index], account);
    }

    /// <summary>
    /// Whether jemalloc's arena <paramref name="arena"/> is still a <see cref="JemArena"/>'s: live, kept
    /// idle in the <see cref="ArenaPool"/> for the next one, or disposed in checked mode and waiting for
    /// the quarantine to let its blocks go. Only the library may reset or destroy such an arena.
    /// </summary>
    internal static bool BelongsToLiveArena(uint arena) => FindByIndex(arena) is { IsArenaGone: false };

    /// <summary>
    /// The ledger's hook before it allocates with <paramref name="flags"/>: for an arena with an
    /// account, removes the thread cache from the flags, enters the arena's gate and charges the
    /// allocation. The ledger must call <see cref="EndAllocation"/> afterwards, whatever happens.
    /// </summary>
    /// <returns>The account entered, or <see langword="null"/> when the arena has none.</returns>
    /// <exception cref="ObjectDisposedException">The arena was destroyed (also when <paramref name="expected"/>, the JemArena the options came from, is no longer the arena at that index).</exception>
    /// <exception cref="ArenaBudgetExceededException">The allocation would exceed the arena's budget.</exception>
    /// <exception cref="ArgumentException">An arena without account named by the flags was destroyed meanwhile.</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static ArenaAccount? BeginAllocation(nuint size, ref int flags, ArenaAccount? expected) =>
        // Flags that name no arena, from options of no JemArena (the common case): nothing to enter.
        expected is null && (uint)flags >> MallocxFlags.ArenaShift == 0 ? null : BeginAllocationInArena(size, ref flags, expected);

    private static ArenaAccount? BeginAllocationInArena(nuint size, ref int flags, ArenaAccount? expected)
    {
        ArenaAccount? account = Find(flags);
        if (expected is not null && !ReferenceEquals(account, expected))
        {
            ThrowOptionsOfDestroyedArena(expected.Index);
        }

        if (account is { IsDestroyed: true, IsArenaGone: true } && ArenaExists(account.Index))
        {
            // The destroyed arena's index was reused by an arena made without a JemArena: its
            // allocations are not ours to count. (Until reuse, the destroyed account refuses them;
            // so it does while a checked-mode dispose waits for the quarantine, the arena still there.)
            _ = Interlocked.CompareExchange(ref Accounts[account.Index], null, account);
            account = null;
        }

        if (account is not null)
        {
            flags = ArenaAccount.WithoutThreadCache(flags);
            account.EnterAndCharge(size, flags);
        }
        else if (NamesUnownedArena(account, flags))
        {
            UnownedArenaGate.EnterAllocation(((uint)flags >> MallocxFlags.ArenaShift) - 1);
        }

        return account;
    }

    // Whether the flags name an arena without an account, so the allocation must pass the gate that
    // orders it against a reset or destruction through mallctl (UnownedArenaGate).
    private static bool NamesUnownedArena(ArenaAccount? account, int flags) =>
        account is null && (uint)flags >> MallocxFlags.ArenaShift != 0;

    [System.Diagnostics.CodeAnalysis.DoesNotReturn]
    private static void ThrowOptionsOfDestroyedArena(uint index) =>
        throw new ObjectDisposedException(ArenaAccount.OwnerTypeName, $"Arena {index} has been destroyed; these options came from it (JemArena.Options), and its index now belongs to another arena.");

    // Reading an arena's decay time fails (EFAULT) exactly when no arena has that index.
    private static unsafe bool ArenaExists(uint index)
    {
        nint decay = 0;
        nuint length = (nuint)sizeof(nint);
        return MallctlClient.Native($"arena.{index}.dirty_decay_ms", &decay, &length, null, 0) == 0;
    }

    /// <summary>The ledger's hook after an allocation begun with <see cref="BeginAllocation"/>: refunds it if it failed and leaves the gate.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static void EndAllocation(ArenaAccount? account, nuint size, int flags, bool succeeded)
    {
        if (account is not null || (uint)flags >> MallocxFlags.ArenaShift != 0)
        {
            EndAllocationInArena(account, size, flags, succeeded);
        }
    }

    private static unsafe void EndAllocationInArena(ArenaAccount? account, nuint size, int flags, bool succeeded)
    {
        if (account is null)
        {
            if (NamesUnownedArena(account, flags))
            {
                UnownedArenaGate.ExitAllocation();
            }

            return;
        }

        if (!succeeded)
        {
            account.Refund((long)JemNative.Nallocx(size, flags));
        }

        account.Exit();
    }

    /// <summary>
    /// The ledger's hook before it frees an allocation made with <paramref name="flags"/>: enters
    /// the arena's gate so that the free cannot interleave with a reset.
    /// </summary>
    /// <returns>The account entered, or <see langword="null"/> when the arena has none or was destroyed (its allocations are then all invalid already).</returns>
    internal static ArenaAccount? BeginFree(int flags)
    {
        ArenaAccount? account = Find(flags);
        return account is not null && account.TryEnter() ? account : null;
    }

    /// <summary>
    /// As <see cref="BeginFree"/> for the free of a retired allocation (a disposed structure): enters
    /// even while a reset holds the gate closed, because that reset waits for this very free.
    /// </summary>
    internal static ArenaAccount? BeginPendingFree(int flags)
    {
        ArenaAccount? account = Find(flags);
        return account is not null && account.TryEnterPastReset() ? account : null;
    }

    /// <summary>The ledger's hook after a free begun with <see cref="BeginFree"/>: refunds the freed bytes, if any, and leaves the gate.</summary>
    internal static unsafe void EndFree(ArenaAccount? account, nuint freedSize, int flags)
    {
        if (account is null)
        {
            return;
        }

        if (freedSize != 0)
        {
            account.Refund((long)JemNative.Nallocx(freedSize, flags));
        }

        account.Exit();
    }
}
