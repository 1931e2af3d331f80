
namespace jemalloc.Internal;

/// <summary>
/// The one-writer rule of the record types (<see cref="NativeHashIndex{TKey}"/>, <see cref="Utf8StringStore"/>):
/// a writer enters, and a second thread that tries to enter before it leaves gets
/// <see cref="InvalidOperationException"/> instead of corrupting the structure. A mutable struct:
/// keep it in a non-readonly field and call it through that field.
/// </summary>
internal struct SingleWriterGuard
{
    private int _writing;

    /// <summary>Whether a writer is in.</summary>
    public readonly bool IsHeld => Volatile.Read(in _writing) != 0;

    /// <summary>
    /// Enters as the writer of <paramref name="owner"/>: throws <see cref="ObjectDisposedException"/>
    /// if it is disposed (checked before and after entering, so a dispose that finished meanwhile is
    /// seen) and <see cref="InvalidOperationException"/> if another thread is writing.
    /// <paramref name="heldBy"/> says what holds the owner as its writer, for that exception's message.
    /// </summary>
    /// <exception cref="ObjectDisposedException">The owner was disposed.</exception>
    /// <exception cref="InvalidOperationException">Another thread is writing.</exception>
    public void Enter(IWriterGuarded owner, string typeName, string heldBy = "a write")
    {
        if (owner.IsDisposed)
        {
            ThrowHelper.ThrowDisposed(typeName);
        }

        if (Interlocked.CompareExchange(ref _writing, 1, 0) != 0)
        {
            ThrowHelper.ThrowInvalidOperation($"Another thread holds this {typeName} as its one writer: {heldBy}. Wait until it is done: it has one writer at a time.");
        }

        if (owner.IsDisposed)
        {
            Exit();
            ThrowHelper.ThrowDisposed(typeName);
        }
    }

    /// <summary>Leaves; the caller is the writer that entered.</summary>
    public void Exit() => Volatile.Write(ref _writing, 0);
}
