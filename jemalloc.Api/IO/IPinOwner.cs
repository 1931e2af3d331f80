namespace jemalloc.IO;

/// <summary>
/// A native memory manager whose pins end only through the <see cref="PinToken"/> its
/// <c>Pin</c> returned. Its public <c>MemoryManager&lt;T&gt;.Unpin()</c> refuses: that method cannot tell
/// pins apart, so a direct call could end another party's pin (a socket's, say) and let the memory be
/// freed under that party's pointer.
/// </summary>
internal interface IPinOwner
{
    /// <summary>Ends one pin; called once per pin, by its token.</summary>
    void EndPin();
}
