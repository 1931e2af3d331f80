namespace jemalloc;

/// <summary>jemalloc's own use of transparent huge pages (the <c>thp</c> option, read back from <c>opt.thp</c>).</summary>
public enum JemThpMode
{
    /// <summary><c>default</c>: jemalloc leaves the kernel's setting alone.</summary>
    Default = 0,

    /// <summary><c>always</c>: jemalloc advises every mapping it makes for huge pages (<c>MADV_HUGEPAGE</c>).</summary>
    Always,

    /// <summary><c>never</c>: jemalloc advises its mappings against huge pages (<c>MADV_NOHUGEPAGE</c>).</summary>
    Never,
}
