using jemalloc.Ledger;

namespace jemalloc;

public static partial class AllocationLedger
{
    /// <summary>
    /// Checked mode, for finding the races the library leaves to its user: an element access that
    /// was not under a lease or <c>Acquire()</c> while another thread freed the structure. Freed
    /// blocks are filled with the byte 0xDB and quarantined (up to <see cref="QuarantineBytes"/>)
    /// before jemalloc may reuse them, so a racing read sees 0xDB bytes instead of another
    /// structure's data, and a racing write is reported by <see cref="UseAfterFreeDetected"/> when
    /// the block leaves the quarantine. On by default when the environment variable
    /// <c>JEMALLOC_NET_CHECKED</c> is <c>1</c> or <c>true</c> (any case, blanks around; <c>0</c> or
    /// <c>false</c> is off, and any other value leaves it off and is noted by <see cref="JemSettings.Describe"/>). Costs a pass over each freed block and
    /// another when it leaves; turning it off checks and frees the quarantine.
    /// </summary>
    /// <remarks>
    /// <para>
    /// Memory in a <see cref="JemArena"/> is quarantined too, and so is everything its
    /// <see cref="JemArena.Reset"/> frees: in checked mode a reset frees each structure and raw
    /// allocation of the arena through the quarantine instead of resetting the arena, so an access
    /// racing the reset reads 0xDB or throws, and the arena's next allocations cannot get the memory
    /// while it is held. Only while a raw allocation made with checked mode off may be live does a
    /// reset poison the structures and reset the arena (whose next allocations may then reuse them).
    /// <see cref="JemArena.Dispose"/> frees the arena's structures and raw allocations through the
    /// quarantine as a reset does, and gives jemalloc's arena up only once the quarantine has let all
    /// of its blocks go (see <see cref="FlushQuarantine"/>).
    /// </para>
    /// <para>A block larger than <see cref="QuarantineBytes"/> is freed at once without poisoning.</para>
    /// </remarks>
    public static bool CheckedMode
    {
        get => Quarantine.Enabled;
        set => Quarantine.Enabled = value;
    }

    /// <summary>
    /// How many bytes of freed memory checked mode holds back (default 256 MiB, or the environment
    /// variable <c>JEMALLOC_NET_QUARANTINE_BYTES</c>, a byte count in decimal digits: any other value
    /// keeps 256 MiB and is noted by <see cref="JemSettings.Describe"/>). Lowering it frees the oldest blocks at once.
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException">The value is negative.</exception>
    public static long QuarantineBytes
    {
        get => Quarantine.Limit;
        set => Quarantine.Limit = value;
    }

    /// <summary>The bytes checked mode holds in quarantine now.</summary>
    public static long QuarantinedBytes => Quarantine.HeldBytes;

    /// <summary>How many freed blocks checked mode has found written to after their free, since the process started.</summary>
    public static long UseAfterFreeWritesDetected => Quarantine.Detected;

    /// <summary>
    /// Raised when checked mode finds a freed block that was written to after its free. It is raised
    /// on the thread whose free (or <see cref="FlushQuarantine"/>) pushed the block out of the
    /// quarantine, after the block was freed; an exception thrown by a handler reaches that caller.
    /// </summary>
    public static event EventHandler<UseAfterFreeEventArgs>? UseAfterFreeDetected
    {
        add => Quarantine.WriteDetected += value;
        remove => Quarantine.WriteDetected -= value;
    }

    /// <summary>Checks every block in checked mode's quarantine and frees it now.</summary>
    public static void FlushQuarantine() => Quarantine.Flush();
}
