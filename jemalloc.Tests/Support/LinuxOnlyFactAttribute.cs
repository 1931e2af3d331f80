namespace jemalloc.Tests.Support;

/// <summary>
/// A test of something only Linux has (an ELF library built with gcc, <c>/proc</c>): reported as
/// skipped, with that reason, on Windows (./build.sh test-win-x64 under wine), never as passed.
/// </summary>
[AttributeUsage(AttributeTargets.Method)]
public sealed class LinuxOnlyFactAttribute : FactAttribute
{
    /// <summary>Creates the attribute; it skips itself on every OS but Linux.</summary>
    public LinuxOnlyFactAttribute()
        : this("ELF shared libraries built with gcc")
    {
    }

    /// <summary>Creates the attribute; it skips itself on every OS but Linux, naming what only Linux has.</summary>
    /// <param name="linuxFeature">What the test needs that only Linux has, for the skip reason.</param>
    public LinuxOnlyFactAttribute(string linuxFeature)
    {
        if (!OperatingSystem.IsLinux())
        {
            Skip = $"tests a Linux-only behaviour ({linuxFeature})";
        }
    }
}
