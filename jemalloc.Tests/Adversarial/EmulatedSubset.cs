namespace jemalloc.Tests.Adversarial;

/// <summary>
/// The trait that marks the representative part of the adversarial suite which also runs under the
/// emulators (./build.sh test-linux-arm64 under qemu-user, test-win-x64 under wine; the runner's
/// <c>--trait</c>): one test per class of protection (stale copies, races, bad input, too-big
/// structures, records, I/O, checked mode), so a protection that holds natively but not on another
/// target fails there too. The whole suite (hundreds of child processes and timed races) stays native.
/// </summary>
internal static class EmulatedSubset
{
    /// <summary>The trait's name.</summary>
    public const string Name = "Emulated";

    /// <summary>The trait's value.</summary>
    public const string Value = "representative";
}
