using System.Runtime.InteropServices;

namespace jemalloc.HugePages;

/// <summary>The running kernel's files.</summary>
internal sealed class SystemHugePageSource : IHugePageSource
{
    private const string EnabledPath = "/sys/kernel/mm/transparent_hugepage/enabled";
    private const string SmapsPath = "/proc/self/smaps";

    internal static SystemHugePageSource Instance { get; } = new();

    public bool IsLinux => OperatingSystem.IsLinux();

    /// <summary>
    /// Huge pages are supported on x64 Linux only, where the transparent huge page is 2 MiB, the unit
    /// <see cref="HugePageAdvisor"/> aligns and advises in. Elsewhere the report says why, instead of guessing.
    /// </summary>
    public string? Unsupported { get; } = ReasonUnsupported();

    private static string? ReasonUnsupported()
    {
        if (OperatingSystem.IsWindows())
        {
            return "Windows has no transparent huge pages. Its large pages need the SeLockMemoryPrivilege and " +
                "VirtualAlloc(MEM_LARGE_PAGES), which jemalloc does not use: the memory uses normal pages.";
        }

        if (!OperatingSystem.IsLinux())
        {
            return "This OS offers no transparent huge pages to this library: the memory uses normal pages.";
        }

        if (RuntimeInformation.ProcessArchitecture != Architecture.X64)
        {
            return $"On {RuntimeInformation.ProcessArchitecture} Linux the transparent huge page size depends on the kernel's base page " +
                "(2 MiB with 4 KiB pages, 512 MiB with 64 KiB pages); this library asks for huge pages in 2 MiB units and has not " +
                "been verified there, so it does not ask for them and reports them unavailable: the memory uses normal pages.";
        }

        return null;
    }

    public string? ReadEnabled()
    {
        try
        {
            return Unsupported is null ? File.ReadAllText(EnabledPath) : null;
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return null;
        }
    }

    public TextReader? OpenSmaps()
    {
        try
        {
            return Unsupported is null ? new StreamReader(SmapsPath) : null;
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return null;
        }
    }
}
