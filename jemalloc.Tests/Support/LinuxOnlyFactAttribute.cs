namespace jemalloc.Tests.Support;

/// <summary>
/// A test of something only Linux has (an ELF library built with gcc, <c>/proc</c>): skipped, with that
/// reason, on Windows (./build.sh test-win-x64 under wine).
/// </summary>
[AttributeUsage(AttributeTargets.Method)]
public sealed class LinuxOnlyFactAttribute : FactAttribute
{
    /// <summary>Creates the attribute; it skips itself on every OS but Linux.</summary>
    public LinuxOnlyFactAttribute()
    {
        if (!OperatingSystem.IsLinux())
        {
            Skip = "tests a Linux-only behaviour (ELF shared libraries built with gcc)";
        }
    }
}
