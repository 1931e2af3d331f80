using System.Buffers;
using jemalloc.Internal;

namespace jemalloc;

/// <summary>
/// One pin of a native memory manager, as the <see cref="MemoryHandle"/> it returns holds it: the
/// handle is a struct, and disposing two copies of it unpins through this token twice, so the token
/// ends its pin once and ignores the second. Without it, one party's copy disposed twice would end
/// another party's pin and let the memory be freed or moved under that party's pointer.
/// </summary>
internal sealed class PinToken : IPinnable
{
    private IPinnable? _pinned;

    internal PinToken(IPinnable pinned) => _pinned = pinned;

    /// <summary>Not used: a token stands for a pin already taken.</summary>
    /// <exception cref="NotSupportedException">Always.</exception>
    public MemoryHandle Pin(int elementIndex)
    {
        ThrowHelper.ThrowNotSupported("A pin of native memory cannot be pinned again: pin the Memory<T>.");
        return default;
    }

    /// <summary>Ends the pin this token stands for, the first time only.</summary>
    public void Unpin() => Interlocked.Exchange(ref _pinned, null)?.Unpin();
}
