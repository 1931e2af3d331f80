namespace jemalloc.Tests.Support;

/// <summary>
/// A theory about something only Linux has (<c>/proc</c>): every case is reported as skipped, with
/// that reason, on Windows (./build.sh test-win-x64 under wine), never as passed.
/// </summary>
[AttributeUsage(AttributeTargets.Method)]
public sealed class LinuxOnlyTheoryAttribute : TheoryAttribute
{
    /// <summary>Creates the attribute; it skips itself on every OS but Linux, naming what only Linux has.</summary>
    /// <param name="linuxFeature">What the test needs that only Linux has, for the skip reason.</param>
    public LinuxOnlyTheoryAttribute(string linuxFeature)
    {
        if (!OperatingSystem.IsLinux())
        {
            Skip = $"tests a Linux-only behaviour ({linuxFeature})";
        }
    }
}
