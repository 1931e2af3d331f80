using jemalloc.HugePages;

namespace jemalloc.Tests.HugePages;

/// <summary>A kernel played from text, to test every mode without changing the machine.</summary>
internal sealed class FakeHugePageSource(bool isLinux, string? enabled, string? smaps) : IHugePageSource
{
    public bool IsLinux => isLinux;

    public string? ReadEnabled() => enabled;

    public TextReader? OpenSmaps() => smaps is null ? null : new StringReader(smaps);
}
