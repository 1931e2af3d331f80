namespace jemalloc;

/// <summary>The kernel's transparent huge page mode (<c>/sys/kernel/mm/transparent_hugepage/enabled</c>).</summary>
public enum TransparentHugePageMode
{
    /// <summary>The OS offers no transparent huge pages: not Linux, or a kernel built without them.</summary>
    Unavailable = 0,

    /// <summary><c>never</c>: transparent huge pages are switched off; all memory uses 4 KiB pages.</summary>
    Never,

    /// <summary><c>madvise</c>: only memory advised with <c>madvise(MADV_HUGEPAGE)</c> gets huge pages (what this library asks for).</summary>
    Madvise,

    /// <summary><c>always</c>: the kernel uses huge pages wherever it can, advised or not.</summary>
    Always,
}
