namespace jemalloc.Tests.Support;

/// <summary>
/// A test that needs the .NET SDK (dotnet build, pack, run): skipped, with that reason, where the suite
/// runs self-contained without one (./build.sh test-linux-arm64 and test-win-x64 under emulators).
/// The packaged path on those targets is tested by ./build.sh test-package instead.
/// </summary>
[AttributeUsage(AttributeTargets.Method)]
public sealed class RequiresDotnetSdkFactAttribute : FactAttribute
{
    /// <summary>Creates the attribute; it skips itself where the suite runs without an SDK.</summary>
    public RequiresDotnetSdkFactAttribute()
    {
        if (ChildProcessRunner.IsSelfContained)
        {
            Skip = "needs the .NET SDK, and this self-contained run has none (the package is tested per RID by ./build.sh test-package)";
        }
    }
}

