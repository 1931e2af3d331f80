namespace jemalloc.HugePages;

/// <summary>Where <see cref="HugePageInfo"/> reads the kernel's facts; replaced in tests to play other kernels.</summary>
internal interface IHugePageSource
{
    /// <summary>Whether the OS is Linux (the only one with transparent huge pages).</summary>
    bool IsLinux { get; }

    /// <summary>
    /// Why this library reports no huge pages on this platform whatever its files say, or
    /// <see langword="null"/> where it supports them (x64 Linux).
    /// </summary>
    string? Unsupported => IsLinux ? null : "This OS offers no transparent huge pages to this library: the memory uses normal pages.";

    /// <summary>The text of <c>/sys/kernel/mm/transparent_hugepage/enabled</c>, or <see langword="null"/> when it does not exist.</summary>
    string? ReadEnabled();

    /// <summary>Opens <c>/proc/self/smaps</c>, or returns <see langword="null"/> when it cannot be read.</summary>
    TextReader? OpenSmaps();
}
