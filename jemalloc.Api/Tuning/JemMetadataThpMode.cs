namespace jemalloc;

/// <summary>Huge pages for jemalloc's own metadata (the <c>metadata_thp</c> option, read back from <c>opt.metadata_thp</c>).</summary>
public enum JemMetadataThpMode
{
    /// <summary><c>disabled</c>: metadata uses normal pages.</summary>
    Disabled = 0,

    /// <summary><c>auto</c>: metadata moves to huge pages once it grows large enough to fill them.</summary>
    Auto,

    /// <summary><c>always</c>: metadata always asks for huge pages.</summary>
    Always,
}
