using System.Buffers;
using jemalloc.Internal;

namespace jemalloc.IO;

/// <summary>
/// One pin of a native memory manager, as the <see cref="MemoryHandle"/> it returns holds it. The
/// handle is a struct, and disposing two copies of it unpins through this token twice: the token ends
/// its own pin once and ignores the second. It is the only way a pin ends (see <see cref="IPinOwner"/>),
/// so no party can end another party's pin.
/// </summary>
internal sealed class PinToken : IPinnable
{
    private IPinOwner? _owner;

    internal PinToken(IPinOwner owner) => _owner = owner;

    /// <summary>Not used: a token stands for a pin already taken.</summary>
    /// <exception cref="NotSupportedException">Always.</exception>
    public MemoryHandle Pin(int elementIndex)
    {
        ThrowHelper.ThrowNotSupported("A pin of native memory cannot be pinned again: pin the Memory<T>.");
        return default;
    }

    /// <summary>Ends the pin this token stands for, the first time only.</summary>
    public void Unpin() => Interlocked.Exchange(ref _owner, null)?.EndPin();
}
