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

    /// <summary>
    /// The first <paramref name="written"/> elements of <paramref name="writer"/>'s block, read at
    /// <paramref name="version"/>, as a sequence of checked memories of at most
    /// <paramref name="maxSegmentLength"/> elements: one memory, or linked segments.
    /// </summary>
    internal static ReadOnlySequence<T> Sequence(NativeBufferWriter<T> writer, long version, long written, int maxSegmentLength)
    {
        if (written == 0)
        {
            return ReadOnlySequence<T>.Empty;
        }

        if (written <= maxSegmentLength)
        {
            return new ReadOnlySequence<T>(new WriterMemory<T>(writer, version, 0, (int)written).AsMemory());
        }

        WrittenSegment<T>? first = null;
        WrittenSegment<T>? last = null;
        for (long offset = 0; offset < written;)
        {
            int length = (int)Math.Min(written - offset, maxSegmentLength);
            var segment = new WrittenSegment<T>(new WriterMemory<T>(writer, version, offset, length).AsMemory(), offset);
            if (last is null)
            {
                first = segment;
            }
            else
            {
                last.Append(segment);
            }

            last = segment;
            offset += length;
        }

        return new ReadOnlySequence<T>(first!, 0, last!, last!.Memory.Length);
    }

    internal void Append(WrittenSegment<T> next) => Next = next;
}
