using System.Buffers;
using System.Text.Json;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.IO;

[Collection(LeakChecked.Name)]
public sealed class NativeBufferWriterSequenceTests : LeakCheckedTest
{
    [Fact]
    public void An_empty_writer_gives_the_empty_sequence_and_a_small_one_a_single_segment_of_its_written_elements()
    {
        using var writer = new NativeBufferWriter<int>();
        Assert.True(writer.WrittenSequence.IsEmpty);
        Write(writer, 1000);
        ReadOnlySequence<int> sequence = writer.WrittenSequence;
        Assert.True(sequence.IsSingleSegment);
        Assert.Equal(1000, sequence.Length);
        Assert.Equal(Enumerable.Range(0, 1000), sequence.ToArray());
    }

    [Fact]
    public void Past_the_segment_length_the_sequence_is_split_into_linked_segments_over_the_one_block()
    {
        using var writer = new NativeBufferWriter<int>();
        Write(writer, 100);
        ReadOnlySequence<int> sequence = writer.GetWrittenSequence(maxSegmentLength: 7);
        Assert.False(sequence.IsSingleSegment);
        Assert.Equal(100, sequence.Length);
        var lengths = new List<int>();
        foreach (ReadOnlyMemory<int> segment in sequence)
        {
            lengths.Add(segment.Length);
        }

        Assert.Equal([.. Enumerable.Repeat(7, 14), 2], lengths);
        Assert.Equal(Enumerable.Range(0, 100), sequence.ToArray());
        Assert.Equal([12, 13, 14, 15], sequence.Slice(12, 4).ToArray());
        Assert.Equal(98, sequence.Slice(sequence.GetPosition(98)).FirstSpan[0]);
    }

    [Fact]
    public void A_multi_segment_sequence_parses_as_JSON_like_one_span()
    {
        using var writer = new NativeBufferWriter<byte>();
        using (var json = new Utf8JsonWriter(writer))
        {
            json.WriteStartArray();
            for (int i = 0; i < 500; i++)
            {
                json.WriteNumberValue(i);
            }

            json.WriteEndArray();
        }

        var reader = new Utf8JsonReader(writer.GetWrittenSequence(maxSegmentLength: 64));
        long sum = 0;
        while (reader.Read())
        {
            if (reader.TokenType == JsonTokenType.Number)
            {
                sum += reader.GetInt32();
            }
        }

        Assert.Equal(499 * 500 / 2, sum);
    }

    [Fact]
    public void After_a_growth_the_sequence_throws_InvalidOperationException_and_after_dispose_ObjectDisposedException()
    {
        var writer = new NativeBufferWriter<int>(16);
        Write(writer, 16);
        ReadOnlySequence<int> single = writer.WrittenSequence;
        ReadOnlySequence<int> split = writer.GetWrittenSequence(maxSegmentLength: 5);
        writer.GetSpan(1000);
        Assert.Throws<InvalidOperationException>(() => single.FirstSpan.Length);
        Assert.Throws<InvalidOperationException>(() => split.ToArray());
        Assert.Throws<InvalidOperationException>(() => split.First.Span.Length);

        ReadOnlySequence<int> fresh = writer.WrittenSequence;
        Assert.Equal(Enumerable.Range(0, 16), fresh.ToArray());
        writer.Dispose();
        Assert.Throws<ObjectDisposedException>(() => fresh.ToArray());
        Assert.Throws<ObjectDisposedException>(() => writer.WrittenSequence);
    }

    private static void Write(NativeBufferWriter<int> writer, int count)
    {
        for (int i = 0; i < count; i++)
        {
            writer.GetSpan(1)[0] = i;
            writer.Advance(1);
        }
    }
}
