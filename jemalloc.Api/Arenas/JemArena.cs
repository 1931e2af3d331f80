using jemalloc.ArenaBooks;
using jemalloc.HugePages;
using jemalloc.Internal;
using jemalloc.Interop;
using jemalloc.Ledger;
using jemalloc.Mallctl;
using jemalloc.Memory;

namespace jemalloc;

/// <summary>
/// A jemalloc arena of its own (<c>arenas.create</c>): a heap for one working set (a request, a
/// query, a batch) that can be thrown away all at once with <see cref="Reset"/> instead of freeing
/// each allocation, optionally under a byte budget. <see cref="Dispose"/> frees everything in it and
/// gives it up: to a process-wide pool, from which the next <see cref="JemArena"/> takes it, or to
/// jemalloc (<c>arena.&lt;i&gt;.destroy</c>).
/// </summary>
/// <remarks>
/// <para>
/// No automatic thread cache ever holds the arena's memory, so a reset cannot leave one pointing at
/// freed memory. Raw allocations (<see cref="Allocate(nuint)"/>) go through an explicit jemalloc
/// thread cache per thread and arena (<c>tcache.create</c>), which keeps small allocations on
/// jemalloc's fast path; the arena flushes all of them before a reset and destroys them with the
/// arena. Structures are allocated with <c>MALLOCX_ARENA(i) | MALLOCX_TCACHE_NONE</c>, because they
/// may be freed on any thread. High-level structures are created in it through <see cref="Options"/>; they count against the
/// budget, and <see cref="Reset"/> and <see cref="Dispose"/> invalidate them through the
/// <see cref="AllocationLedger"/> before the memory goes: any later access to them throws
/// <see cref="ObjectDisposedException"/>, and disposing them afterwards frees nothing twice.
/// </para>
/// <para>
/// Raw memory from <see cref="Allocate(nuint)"/> is different: a pointer cannot be invalidated, so
/// after <see cref="Reset"/> or <see cref="Dispose"/> every such pointer dangles. Reading or writing
/// through it, or passing it to <see cref="Free"/>, is undefined behaviour exactly like a
/// use-after-free in C. Use the raw API only for memory whose lifetime ends with the arena's.
/// </para>
/// <para>
/// All members are thread-safe: any number of threads may allocate and free in one arena at once.
/// A <see cref="Reset"/> waits until allocations and frees already running have finished and holds
/// new ones back until it is done. An arena that is never disposed keeps its memory until the
/// process ends; it has no finalizer, because structures in it may outlive the
/// <see cref="JemArena"/> object.
/// </para>
/// </remarks>
public sealed unsafe class JemArena : IDisposable
{
    private const string TypeName = nameof(JemArena);
    private readonly ArenaAccount _account;
    private readonly ArenaThreadCaches _threadCaches = new();
    private readonly ArenaRawBlocks _rawBlocks = new();
    private readonly int _flags;

    /// <summary>
    /// Creates an arena: one a disposed <see cref="JemArena"/> left in the pool if there is one (emptied,
    /// its pages returned to the OS, and every per-arena setting restored to what a new arena has), else
    /// a new jemalloc arena (<c>arenas.create</c>). Either way it starts with nothing allocated, no
    /// budget used, statistics counted from zero, and the decay times a new arena gets
    /// (<c>arenas.dirty_decay_ms</c>, <c>arenas.muzzy_decay_ms</c>).
    /// </summary>
    /// <param name="budgetBytes">
    /// The most bytes the arena may have in use at once, counted in jemalloc size classes (what each
    /// allocation really takes), or <see langword="null"/> for no limit.
    /// </param>
    /// <param name="hugePages">
    /// Ask for transparent huge pages for every allocation of 2 MiB or more in the arena (2 MiB
    /// alignment and <c>madvise(MADV_HUGEPAGE)</c>); see <see cref="HugePageInfo"/>.
    /// </param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="budgetBytes"/> is not positive.</exception>
    /// <exception cref="MallctlException">jemalloc could not create another arena (it has at most 4095); nothing was created or recorded.</exception>
    /// <exception cref="JemLibraryException">The native library could not be loaded.</exception>
    public JemArena(long? budgetBytes = null, bool hugePages = false)
    {
        if (budgetBytes is { } budget)
        {
            ArgumentOutOfRangeException.ThrowIfNegativeOrZero(budget, nameof(budgetBytes));
        }

        _account = ArenaAccounts.Create(budgetBytes ?? ArenaAccount.Unlimited);
        _flags = (MallocxFlags.Arena(_account.Index) | MallocxFlags.NoThreadCache).Value;
        HugePages = hugePages;
    }

    /// <summary>The arena's jemalloc index (the <c>&lt;i&gt;</c> in <c>arena.&lt;i&gt;.*</c>).</summary>
    public uint Index => _account.Index;

    /// <summary>The byte budget, or <see langword="null"/> when the arena has none.</summary>
    public long? BudgetBytes => _account.Budget == ArenaAccount.Unlimited ? null : _account.Budget;

    /// <summary>
    /// The bytes in use in the arena: the jemalloc size classes of its live allocations, both raw
    /// ones and those of structures created with <see cref="Options"/>. Zero after <see cref="Reset"/>.
    /// </summary>
    public long UsedBytes => _account.Used;

    /// <summary>The most bytes the arena has had in use at once since it was created (a reset does not clear it).</summary>
    public long PeakBytes => _account.Peak;

    /// <summary>Whether allocations of 2 MiB or more in the arena ask for transparent huge pages.</summary>
    public bool HugePages { get; }

    /// <summary>Whether the arena has been destroyed by <see cref="Dispose"/>.</summary>
    public bool IsDisposed => _account.IsDestroyed;

    /// <summary>The <c>mallocx</c> flags that allocate in this arena without a thread cache.</summary>
    /// <exception cref="ObjectDisposedException">The arena has been destroyed.</exception>
    public MallocxFlags Flags
    {
        get
        {
            ThrowIfDisposed();
            return MallocxFlags.Arena(Index) | MallocxFlags.NoThreadCache;
        }
    }

    /// <summary>
    /// The options that create a <c>FixedBuffer&lt;T&gt;</c>, <c>SafeArray&lt;T&gt;</c> or
    /// <c>HugeArray&lt;T&gt;</c> in this arena, counted against its budget and invalidated by its reset.
    /// </summary>
    /// <remarks>
    /// After <see cref="Dispose"/>, structures created with these options throw
    /// <see cref="ObjectDisposedException"/>, also once jemalloc has given the arena's index to a new
    /// arena. (Options made by hand from <see cref="Flags"/> name the index only.)
    /// </remarks>
    /// <exception cref="ObjectDisposedException">The arena has been destroyed.</exception>
    public AllocationOptions Options => new(Flags, HugePages) { Account = _account };

    /// <summary>The arena's dirty page decay time in milliseconds (<c>arena.&lt;i&gt;.dirty_decay_ms</c>): -1 keeps unused dirty pages, 0 purges them at once.</summary>
    /// <exception cref="ArgumentOutOfRangeException">The value is less than -1, or more than jemalloc's limit (18,446,744,072,000 on 64-bit).</exception>
    /// <exception cref="ObjectDisposedException">The arena has been destroyed.</exception>
    public long DirtyDecayMilliseconds
    {
        get => GetDecay(dirty: true);
        set => SetDecay(dirty: true, value);
    }

    /// <summary>The arena's muzzy page decay time in milliseconds (<c>arena.&lt;i&gt;.muzzy_decay_ms</c>): -1 keeps unused muzzy pages, 0 purges them at once.</summary>
    /// <exception cref="ArgumentOutOfRangeException">The value is less than -1, or more than jemalloc's limit (18,446,744,072,000 on 64-bit).</exception>
    /// <exception cref="ObjectDisposedException">The arena has been destroyed.</exception>
    public long MuzzyDecayMilliseconds
    {
        get => GetDecay(dirty: false);
        set => SetDecay(dirty: false, value);
    }

    /// <summary>
    /// Allocates <paramref name="size"/> bytes in the arena. The memory is raw: it dangles after
    /// <see cref="Reset"/> or <see cref="Dispose"/> (see the remarks on <see cref="JemArena"/>).
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="size"/> is zero.</exception>
    /// <exception cref="ArenaBudgetExceededException">The allocation would exceed the arena's budget; nothing was allocated.</exception>
    /// <exception cref="OutOfMemoryException">jemalloc could not allocate the memory.</exception>
    /// <exception cref="ObjectDisposedException">The arena has been destroyed.</exception>
    public void* Allocate(nuint size) => AllocateCore(size, _flags);

    /// <summary>Allocates <paramref name="size"/> zero-filled bytes in the arena; see <see cref="Allocate(nuint)"/>.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="size"/> is zero.</exception>
    /// <exception cref="ArenaBudgetExceededException">The allocation would exceed the arena's budget; nothing was allocated.</exception>
    /// <exception cref="OutOfMemoryException">jemalloc could not allocate the memory.</exception>
    /// <exception cref="ObjectDisposedException">The arena has been destroyed.</exception>
    public void* AllocateZeroed(nuint size) => AllocateCore(size, _flags | MallocxFlags.Zero.Value);

    /// <summary>Allocates <paramref name="size"/> bytes aligned to <paramref name="alignment"/> in the arena; see <see cref="Allocate(nuint)"/>.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="size"/> is zero.</exception>
    /// <exception cref="ArgumentException"><paramref name="alignment"/> is not a power of two.</exception>
    /// <exception cref="ArenaBudgetExceededException">The allocation would exceed the arena's budget; nothing was allocated.</exception>
    /// <exception cref="OutOfMemoryException">jemalloc could not allocate the memory.</exception>
    /// <exception cref="ObjectDisposedException">The arena has been destroyed.</exception>
    public void* Allocate(nuint size, nuint alignment) => AllocateCore(size, _flags | MallocxFlags.Align(alignment).Value);

    /// <summary>
    /// Frees memory returned by this arena's <see cref="Allocate(nuint)"/> since its last
    /// <see cref="Reset"/>. A null pointer is ignored. Any other pointer is undefined behaviour.
    /// </summary>
    /// <exception cref="ObjectDisposedException">The arena has been destroyed (which freed the memory already).</exception>
    public void Free(void* memory)
    {
        if (memory == null)
        {
            return;
        }

        _account.Enter();
        try
        {
            _rawBlocks.Remove((nint)memory);
            nuint size = JemNative.Sallocx(memory, _flags);
            NativeAllocator.Free(memory, size, _threadCaches.FlagsFor(_flags));
            _account.Refund((long)size);
        }
        finally
        {
            _account.Exit();
        }
    }

    /// <summary>Creates a zero-filled <see cref="FixedBuffer{T}"/> of <paramref name="length"/> elements in the arena.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="length"/> is zero or negative.</exception>
    /// <exception cref="NotSupportedException"><typeparamref name="T"/> is not a primitive type.</exception>
    /// <exception cref="ArenaBudgetExceededException">The buffer would exceed the arena's budget.</exception>
    /// <exception cref="OutOfMemoryException">jemalloc could not allocate the memory.</exception>
    /// <exception cref="ObjectDisposedException">The arena has been destroyed.</exception>
    public FixedBuffer<T> CreateBuffer<T>(int length)
        where T : unmanaged => new(length, Options);

    /// <summary>Creates a zero-filled <see cref="SafeArray{T}"/> of <paramref name="length"/> elements in the arena.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="length"/> is zero or negative.</exception>
    /// <exception cref="ArenaBudgetExceededException">The array would exceed the arena's budget.</exception>
    /// <exception cref="OutOfMemoryException">jemalloc could not allocate the memory.</exception>
    /// <exception cref="ObjectDisposedException">The arena has been destroyed.</exception>
    public SafeArray<T> CreateArray<T>(int length)
        where T : unmanaged, IEquatable<T> => new(length, Options);

    /// <summary>Creates a zero-filled <see cref="HugeArray{T}"/> of <paramref name="length"/> elements in the arena.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="length"/> is zero or negative.</exception>
    /// <exception cref="OverflowException">The size in bytes does not fit in the address space.</exception>
    /// <exception cref="ArenaBudgetExceededException">The array would exceed the arena's budget.</exception>
    /// <exception cref="OutOfMemoryException">jemalloc could not allocate the memory.</exception>
    /// <exception cref="ObjectDisposedException">The arena has been destroyed.</exception>
    public HugeArray<T> CreateHugeArray<T>(long length)
        where T : unmanaged, IEquatable<T> => new(length, Options);

    /// <summary>
    /// Frees everything allocated in the arena at once (<c>arena.&lt;i&gt;.reset</c>). Structures
    /// created in it become invalid first: any later access to them throws
    /// <see cref="ObjectDisposedException"/>. Raw pointers from <see cref="Allocate(nuint)"/> dangle.
    /// <see cref="UsedBytes"/> drops to zero; the arena stays usable.
    /// </summary>
    /// <remarks>
    /// In checked mode (<see cref="AllocationLedger.CheckedMode"/>) the reset frees each structure and
    /// raw allocation as a free would: poisoned and held in the quarantine, so that an access racing
    /// the reset reads poison (or throws) rather than a later structure's data, and a write through it
    /// is reported instead of landing in a live structure. Only raw allocations made while checked
    /// mode was off cannot be found one by one: while one may be live, the reset poisons the
    /// structures and resets the arena, whose next allocations may then reuse the memory.
    /// </remarks>
    /// <exception cref="InvalidOperationException">A structure in the arena is acquired or leased (or in use by a native call), a <see cref="JemMemoryPool"/> block in it is rented or pinned, or a <see cref="Utf8StringStore"/> in it has a read scope open (<see cref="Utf8StringStore.EnterRead"/>); nothing was reset.</exception>
    /// <exception cref="ObjectDisposedException">The arena has been destroyed.</exception>
    public void Reset()
    {
        _account.CloseAndDrain();
        bool reset = false;
        bool quarantined = false;
        try
        {
            if (AllocationLedger.CheckedMode && !_rawBlocks.MayHaveUntracked)
            {
                quarantined = true;
                _ = LedgerBlock.InvalidateArena(Index, freeEach: true);
                _account.WaitUntilEmpty();
                _threadCaches.FlushAll();
                QuarantineRawBlocks();
            }
            else
            {
                _ = LedgerBlock.InvalidateArena(Index);
                // Frees of structures disposed just before the reset were let in past the closed gate.
                _account.WaitUntilEmpty();
                ReleaseForArenaReset();
                MallctlClient.RunNative($"arena.{Index}.reset");
                _rawBlocks.Forget();
            }

            reset = true;
        }
        finally
        {
            _account.Reopen(cleared: reset);
        }

        if (quarantined)
        {
            // With the gate open: a UseAfterFreeDetected handler may allocate in this arena.
            LedgerBlock.EvictQuarantineOverLimit();
        }
    }

    /// <summary>Purges all of the arena's unused dirty pages now (<c>arena.&lt;i&gt;.purge</c>), returning them to the OS.</summary>
    /// <exception cref="ObjectDisposedException">The arena has been destroyed.</exception>
    public void Purge()
    {
        ThrowIfDisposed();
        MallctlKeys.Arena(Index).Purge.Run();
    }

    /// <summary>Purges the unused pages the decay settings say are due (<c>arena.&lt;i&gt;.decay</c>).</summary>
    /// <exception cref="ObjectDisposedException">The arena has been destroyed.</exception>
    public void Decay()
    {
        ThrowIfDisposed();
        MallctlKeys.Arena(Index).Decay.Run();
    }

    /// <summary>
    /// Reads the arena's statistics from jemalloc. Returns the per-thread caches' objects to the
    /// arena (holding allocations back meanwhile) and refreshes jemalloc's statistics first (writes
    /// <c>epoch</c>), which costs far more than an allocation: not for hot paths.
    /// </summary>
    /// <exception cref="ObjectDisposedException">The arena has been destroyed.</exception>
    /// <exception cref="MallctlException">jemalloc was built without statistics.</exception>
    public ArenaStatistics GetStatistics()
    {
        // Objects freed into the per-thread caches still count as allocated in the arena: return them first.
        _account.CloseAndDrain();
        try
        {
            _threadCaches.FlushAll();
        }
        finally
        {
            _account.Reopen(cleared: false);
        }

        MallctlKeys.Epoch.Set(1);
        ArenaKeys keys = MallctlKeys.Arena(Index);
        long page = (long)MallctlKeys.Arenas.Page.Get();
        // jemalloc's counters run on over a pooled arena's owners: count from where this one got it.
        ArenaCounts start = _account.StartCounts;
        return new ArenaStatistics(
            ActiveBytes: (long)keys.ActivePages.Get() * page,
            DirtyBytes: (long)keys.DirtyPages.Get() * page,
            MuzzyBytes: (long)keys.MuzzyPages.Get() * page,
            MappedBytes: (long)keys.Mapped.Get(),
            ResidentBytes: (long)keys.Resident.Get(),
            RetainedBytes: (long)keys.Retained.Get(),
            SmallAllocatedBytes: (long)keys.SmallAllocated.Get(),
            LargeAllocatedBytes: (long)keys.LargeAllocated.Get(),
            SmallAllocations: keys.SmallAllocationCount.Get() - start.SmallAllocations,
            SmallDeallocations: keys.SmallDeallocationCount.Get() - start.SmallDeallocations,
            LargeAllocations: keys.LargeAllocationCount.Get() - start.LargeAllocations,
            LargeDeallocations: keys.LargeDeallocationCount.Get() - start.LargeDeallocations,
            ThreadCount: keys.ThreadCount.Get());
    }

    /// <summary>
    /// Frees everything in the arena, as <see cref="Reset"/> does, and gives it up: structures created
    /// in it throw <see cref="ObjectDisposedException"/> from now on, and so do its <see cref="Options"/>,
    /// even once its index serves another arena. Calling it again does nothing.
    /// </summary>
    /// <remarks>
    /// <para>
    /// The jemalloc arena is not destroyed but reset (<c>arena.&lt;i&gt;.reset</c>), purged
    /// (<c>arena.&lt;i&gt;.purge</c>: its pages go back to the OS, as a destruction's would) and kept
    /// in a process-wide pool of up to 32 idle arenas, which the next <c>new JemArena()</c> takes
    /// first: jemalloc's <c>arena.&lt;i&gt;.destroy</c> leaves the arena's metadata block mapped, and
    /// each new arena maps another, so a process that made and destroyed arenas in a loop grew without
    /// bound. No mallctl call can reset, destroy or move a thread onto an idle pooled arena. The arena
    /// is destroyed (<c>arena.&lt;i&gt;.destroy</c>) as before when the pool is full, when memory in it
    /// was advised for huge pages (the kernel keeps the advice on its address ranges, so the next owner
    /// could not start without it), when a thread was ever moved onto it (<c>thread.arena</c>), or when
    /// its extent hooks were replaced. A pooled arena keeps the address space it had reserved
    /// (<see cref="ArenaStatistics.RetainedBytes"/>, no memory) for its next owner to reuse.
    /// </para>
    /// <para>
    /// In checked mode the dispose follows <see cref="Reset"/>'s rule: it frees each structure and raw
    /// allocation of the arena into the quarantine (poisoned and held), marks the arena destroyed, and
    /// gives the jemalloc arena up only once the quarantine has let all of its blocks go (as it lets
    /// the oldest blocks go past its limit, or on <see cref="AllocationLedger.FlushQuarantine"/>). An
    /// access racing the dispose therefore reads poison or throws, never unmapped memory or memory of
    /// a later allocation. Only while a raw allocation made with checked mode off may be live is the
    /// arena given up at once, its structures only poisoned, as <see cref="Reset"/> then resets it.
    /// </para>
    /// </remarks>
    /// <exception cref="InvalidOperationException">
    /// A structure in the arena is acquired or leased, a <see cref="JemMemoryPool"/> block in it is
    /// rented or pinned, or a <see cref="Utf8StringStore"/> in it has a read scope open (nothing was
    /// freed); or a thread still has the arena as
    /// its <c>thread.arena</c> (everything was freed, as by <see cref="Reset"/>, but the arena remains).
    /// </exception>
    public void Dispose()
    {
        if (!_account.TryEnter())
        {
            return;
        }

        _account.Exit();
        try
        {
            _account.CloseAndDrain();
        }
        catch (ObjectDisposedException)
        {
            return; // Another thread destroyed it meanwhile.
        }

        if (AllocationLedger.CheckedMode && !_rawBlocks.MayHaveUntracked)
        {
            DisposeChecked();
            return;
        }

        try
        {
            _ = LedgerBlock.InvalidateArena(Index);
            _account.WaitUntilEmpty();
        }
        catch
        {
            _account.Reopen(cleared: false);
            throw;
        }

        try
        {
            ReleaseForArenaReset();
            _account.RetireArena();
        }
        catch (MallctlException e)
        {
            // jemalloc refuses to destroy an arena some thread is bound to; free its memory anyway.
            MallctlClient.RunNative($"arena.{Index}.reset");
            _rawBlocks.Forget();
            _account.Reopen(cleared: true);
            throw new InvalidOperationException(
                $"Arena {Index} cannot be destroyed while a thread has it as its thread.arena; its memory was freed (as by Reset) but the arena remains. Move those threads to another arena first.", e);
        }

        _rawBlocks.Forget();
        _threadCaches.Dispose();
        _account.MarkDestroyed();
    }

    /// <inheritdoc/>
    public override string ToString() =>
        $"{TypeName} {Index}: {UsedBytes:N0} bytes used, peak {PeakBytes:N0}" +
        (BudgetBytes is { } budget ? $", budget {budget:N0}" : string.Empty) +
        (HugePages ? ", huge pages" : string.Empty) + (IsDisposed ? ", destroyed" : string.Empty);

    private void* AllocateCore(nuint size, int flags)
    {
        if (size == 0)
        {
            ThrowHelper.ThrowArgumentOutOfRange(nameof(size), size, "The size must be greater than zero.");
        }

        bool hugePages = HugePagePolicy.Advises(size, HugePages);
        if (hugePages)
        {
            flags = HugePageAdvisor.AlignFlags(flags);
        }

        bool zero = (flags & MallocxFlags.ZeroBit) != 0;
        flags &= ~MallocxFlags.ZeroBit;
        long charged = _account.EnterAndCharge(size, flags);
        try
        {
            void* memory = NativeAllocator.Allocate(size, _threadCaches.FlagsFor(flags), hugePages, zero);
            // Recorded inside the gate, so a reset sees it or frees it with the arena.
            _rawBlocks.Add((nint)memory, size, tracked: AllocationLedger.CheckedMode);
            return memory;
        }
        catch
        {
            _account.Refund(charged);
            throw;
        }
        finally
        {
            _account.Exit();
        }
    }

    /// <summary>
    /// Checked mode's dispose, with the gate closed: every structure and raw allocation goes into the
    /// quarantine, as in a checked <see cref="Reset"/>; the arena refuses everything from now on, and
    /// jemalloc's arena is destroyed once the quarantine holds none of its blocks.
    /// </summary>
    /// <exception cref="InvalidOperationException">A structure in the arena is acquired or leased, or a pool block in it rented; nothing was freed.</exception>
    private void DisposeChecked()
    {
        try
        {
            _ = LedgerBlock.InvalidateArena(Index, freeEach: true);
            _account.WaitUntilEmpty();
            _threadCaches.FlushAll();
            QuarantineRawBlocks();
        }
        catch
        {
            _account.Reopen(cleared: false);
            throw;
        }

        // Every later entry fails, so no block of the arena comes into the quarantine any more.
        _account.MarkDestroyed();
        LedgerBlock.DestroyArenaWhenDrained(Index, DestroyDrained);
        // With the gate open: a UseAfterFreeDetected handler may allocate (elsewhere).
        LedgerBlock.EvictQuarantineOverLimit();
    }

    /// <summary>
    /// The end of a checked-mode dispose, once the quarantine holds no block of the arena: on the thread
    /// whose free, flush or dispose let the last one go, so it throws nothing. The arena goes to the pool
    /// or is destroyed (<see cref="ArenaAccount.RetireArena"/>); a thread that has it as its
    /// <c>thread.arena</c> keeps jemalloc from destroying it: it is reset instead, and its index stays taken.
    /// </summary>
    private void DestroyDrained()
    {
        try
        {
            // Destroyed before the arena is given up: once pooled, it may serve another JemArena at once.
            try
            {
                _threadCaches.FlushAll();
            }
            finally
            {
                _threadCaches.Dispose();
            }

            _account.RetireArena();
        }
        catch (MallctlException)
        {
            try
            {
                MallctlClient.RunNative($"arena.{Index}.reset");
            }
            catch (MallctlException)
            {
                // Nothing is live in it: its memory stays with jemalloc's arena, which remains.
            }
        }

        _rawBlocks.Forget();
    }

    // With the gate closed and the thread caches flushed: checked mode's reset frees each live raw
    // allocation through the quarantine, as it frees the structures.
    private void QuarantineRawBlocks()
    {
        foreach (nint memory in _rawBlocks.TakeTracked())
        {
            nuint size = JemNative.Sallocx((void*)memory, _flags);
            if (!LedgerBlock.TryQuarantineRaw((void*)memory, size, _flags))
            {
                NativeAllocator.Free((void*)memory, size, _flags);
            }
        }
    }

    // Before the arena's own reset or destruction frees all its memory: no thread cache and no
    // quarantine may still hold a block of it (either would free it a second time later).
    private void ReleaseForArenaReset()
    {
        _threadCaches.FlushAll();
        LedgerBlock.ReleaseArenaFromQuarantine(Index);
    }

    private long GetDecay(bool dirty)
    {
        ThrowIfDisposed();
        ArenaKeys keys = MallctlKeys.Arena(Index);
        return dirty ? keys.DirtyDecayMs.Get() : keys.MuzzyDecayMs.Get();
    }

    private void SetDecay(bool dirty, long milliseconds)
    {
        nint checkedMilliseconds = DecayTime.Check(milliseconds, dirty ? nameof(DirtyDecayMilliseconds) : nameof(MuzzyDecayMilliseconds));
        ThrowIfDisposed();
        ArenaKeys keys = MallctlKeys.Arena(Index);
        (dirty ? keys.DirtyDecayMs : keys.MuzzyDecayMs).Set(checkedMilliseconds);
    }

    private void ThrowIfDisposed()
    {
        if (_account.IsDestroyed)
        {
            throw new ObjectDisposedException(TypeName, $"Arena {Index} has been destroyed.");
        }
    }
}
