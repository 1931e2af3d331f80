namespace jemalloc.HugePages;

/// <summary>The running kernel's files.</summary>
internal sealed class SystemHugePageSource : IHugePageSource
{
    private const string EnabledPath = "/sys/kernel/mm/transparent_hugepage/enabled";
    private const string SmapsPath = "/proc/self/smaps";

    internal static SystemHugePageSource Instance { get; } = new();

    public bool IsLinux => OperatingSystem.IsLinux();

    public string? ReadEnabled()
    {
        try
        {
            return IsLinux ? File.ReadAllText(EnabledPath) : null;
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
            return IsLinux ? new StreamReader(SmapsPath) : null;
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return null;
        }
    }
}
