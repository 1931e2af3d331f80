using System.Buffers;

namespace jemalloc.IO;

/// <summary>
/// One segment of a <see cref="NativeBufferWriter{T}.WrittenSequence"/>: a checked memory over part
/// of the writer's one block, linked to the next part.
/// </summary>
internal sealed class WrittenSegment<T> : ReadOnlySequenceSegment<T>
    where T : unmanaged
{
    internal WrittenSegment(ReadOnlyMemory<T> memory, long runningIndex)
    {
        Memory = memory;
        RunningIndex = runningIndex;
    }

    internal void Append(WrittenSegment<T> next) => Next = next;
}
