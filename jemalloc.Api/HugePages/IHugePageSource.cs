namespace jemalloc.HugePages;

/// <summary>Where <see cref="HugePageInfo"/> reads the kernel's facts; replaced in tests to play other kernels.</summary>
internal interface IHugePageSource
{
    /// <summary>Whether the OS is Linux (the only one with transparent huge pages).</summary>
    bool IsLinux { get; }

    /// <summary>The text of <c>/sys/kernel/mm/transparent_hugepage/enabled</c>, or <see langword="null"/> when it does not exist.</summary>
    string? ReadEnabled();

    /// <summary>Opens <c>/proc/self/smaps</c>, or returns <see langword="null"/> when it cannot be read.</summary>
    TextReader? OpenSmaps();
}
