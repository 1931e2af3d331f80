using System.Reflection;
using jemalloc.Internal;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.IO;

/// <summary>
/// The one-writer rule of <see cref="NativeBufferWriter{T}"/> and <see cref="NativeMemoryStream"/>,
/// deterministically: with the guard held, as while another thread is inside a write, every writing
/// member is refused with <see cref="InvalidOperationException"/> and changes nothing, reads of the
/// written elements are refused, plain counts are not; once it is left, everything works again.
/// (The races themselves are child-process scenarios: <see cref="Adversarial.ConcurrentUseTests"/>.)
/// </summary>
[Collection(LeakChecked.Name)]
public sealed class IoSingleWriterTests : LeakCheckedTest
{
    private static readonly int[] Sevens = [7, 7, 7];
    private static readonly int[] SevensAndEight = [7, 7, 7, 8];

    [Fact]
    public void A_stream_over_a_writer_that_another_thread_writes_is_refused()
    {
        using var writer = new NativeBufferWriter<byte>();
        using var stream = new NativeMemoryStream(writer, leaveOpen: true);
        stream.WriteByte(1);
        using (Hold(writer))
        {
            Refused(() => stream.WriteByte(2));
            Refused(() => stream.SetLength(5));
            Refused(() => stream.Read(new byte[1]));
        }

        stream.WriteByte(2);
        Assert.Equal(2, stream.Length);
    }

    [Fact]
    public void A_writer_refuses_every_writing_member_and_every_read_of_its_elements_while_another_thread_writes()
    {
        using var writer = new NativeBufferWriter<int>(16);
        writer.GetSpan(3)[..3].Fill(7);
        writer.Advance(3);
        Memory<int> memory = writer.GetMemory(2);

        using (Hold(writer))
        {
            Refused(() => writer.Advance(1));
            Refused(() => writer.GetSpan(1));
            Refused(() => writer.GetSpan(100));
            Refused(() => writer.GetMemory(1));
            Refused(writer.Clear);
            Refused(writer.ResetWrittenCount);
            Refused(() => writer.DetachToSafeArray());
            Refused(() => memory.Pin());
            Refused(() => _ = memory.Span.Length);
            Refused(() => _ = writer.WrittenSpan.Length);
            Refused(() => _ = writer.GetWrittenSpan(0, 1).Length);
            Refused(() => _ = writer.WrittenSequence);
            Refused(writer.Dispose);

            // Plain counts only read one word each.
            Assert.Equal(3, writer.WrittenCount);
            Assert.Equal(16, writer.Capacity);
            Assert.Equal(13, writer.FreeCapacity);
        }

        Assert.Equal(Sevens, writer.WrittenSpan.ToArray());
        memory.Span[0] = 8;
        writer.Advance(1);
        Assert.Equal(SevensAndEight, writer.WrittenSpan.ToArray());
    }

    [Fact]
    public void A_stream_refuses_every_operation_that_moves_or_changes_it_while_another_thread_uses_it()
    {
        using var stream = new NativeMemoryStream();
        stream.Write([1, 2, 3]);
        using (Hold(stream))
        {
            Refused(() => stream.Write([4]));
            Refused(() => stream.WriteByte(4));
            Refused(() => stream.Read(new byte[1]));
            Refused(() => stream.ReadByte());
            Refused(() => stream.Seek(0, SeekOrigin.Begin));
            Refused(() => stream.Position = 0);
            Refused(() => stream.SetLength(1));
            Refused(() => stream.CopyTo(Stream.Null));
            Refused(() => stream.WriteAsync(new byte[] { 4 }).AsTask().GetAwaiter().GetResult());

            // Reads of its state and a copy of all of it are not refused.
            Assert.Equal(3, stream.Length);
            Assert.Equal(3, stream.Position);
            Assert.Equal(new byte[] { 1, 2, 3 }, stream.ToArray());
        }

        stream.Position = 0;
        Assert.Equal(1, stream.ReadByte());
        stream.Write([9]);
        Assert.Equal(new byte[] { 1, 9, 3 }, stream.ToArray());
    }

    private static void Refused(Action action)
    {
        InvalidOperationException e = Assert.Throws<InvalidOperationException>(action);
        Assert.Contains("another thread", e.Message, StringComparison.OrdinalIgnoreCase);
    }

    private static void Refused(Func<object?> action) => Refused(() => { _ = action(); });

    /// <summary>Holds the object's guard, as another thread inside a write would, until disposed.</summary>
    private static GuardHold Hold(object target)
    {
        FieldInfo field = target.GetType().GetField("_guard", BindingFlags.NonPublic | BindingFlags.Instance)!;
        Assert.Equal(typeof(SingleWriterGuard), field.FieldType);
        var held = default(SingleWriterGuard);
        held.Enter((IWriterGuarded)target, "test");
        field.SetValue(target, held);
        return new GuardHold(() => field.SetValue(target, default(SingleWriterGuard)));
    }

    private sealed class GuardHold(Action release) : IDisposable
    {
        public void Dispose() => release();
    }
}
