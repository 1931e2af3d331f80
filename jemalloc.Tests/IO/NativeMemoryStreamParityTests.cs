using System.Globalization;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.IO;

/// <summary>
/// One table of operations, every public member of <see cref="Stream"/> that <see cref="NativeMemoryStream"/>
/// has, at its edges (negative, huge and past-the-end arguments, null buffers, canceled tokens, after
/// <c>Dispose</c>), run on a <see cref="MemoryStream"/> and a <see cref="NativeMemoryStream"/> of the same
/// kind (growable, fixed and writable, fixed and read-only) holding the same 16 bytes: the result, the
/// exception's type (thrown at once or carried by the task), and the state afterwards (length, position,
/// contents, <c>CanRead</c>/<c>CanWrite</c>/<c>CanSeek</c>) must be the same, except for the intended
/// differences listed in <see cref="Differences"/>, each checked as it is documented.
/// </summary>
[Collection(LeakChecked.Name)]
public sealed class NativeMemoryStreamParityTests : LeakCheckedTest
{
    public enum Kind
    {
        Growable,
        Fixed,
        ReadOnly,
    }

    private static readonly byte[] Start = Enumerable.Range(1, 16).Select(i => (byte)i).ToArray();

    private static readonly Dictionary<string, Func<Stream, string>> Operations = new()
    {
        ["Read(byte[],0,4)"] = s => ReadArray(s, 4),
        ["Read at the end"] = s => { s.Position = s.Length; return ReadArray(s, 4); },
        ["Read past the end"] = s => { s.Position = 100; return ReadArray(s, 4); },
        ["Read(null,0,1)"] = s => s.Read(null!, 0, 1).ToString(CultureInfo.InvariantCulture),
        ["Read(buffer,-1,1)"] = s => s.Read(new byte[4], -1, 1).ToString(CultureInfo.InvariantCulture),
        ["Read(buffer,0,-1)"] = s => s.Read(new byte[4], 0, -1).ToString(CultureInfo.InvariantCulture),
        ["Read(buffer,2,4) past the buffer"] = s => s.Read(new byte[4], 2, 4).ToString(CultureInfo.InvariantCulture),
        ["Read(empty span)"] = s => s.Read([]).ToString(CultureInfo.InvariantCulture),
        ["Read(span) of 40"] = s => { var b = new byte[40]; int n = s.Read(b.AsSpan()); return $"{n} {Hex(b)}"; },
        ["ReadByte"] = s => s.ReadByte().ToString(CultureInfo.InvariantCulture),
        ["ReadByte at the end"] = s => { s.Position = 16; return s.ReadByte().ToString(CultureInfo.InvariantCulture); },
        ["ReadByte past the end"] = s => { s.Position = 17; return s.ReadByte().ToString(CultureInfo.InvariantCulture); },
        ["Write(byte[],0,4) at 0"] = s => { s.Write([9, 8, 7, 6], 0, 4); return ""; },
        ["Write(byte[],1,2) at the end"] = s => { s.Position = 16; s.Write([9, 8, 7, 6], 1, 2); return ""; },
        ["Write 3 bytes past the end"] = s => { s.Position = 20; s.Write([9, 8, 7]); return ""; },
        ["Write(empty) past the end"] = s => { s.Position = 20; s.Write([]); return ""; },
        ["Write(byte[],0,0) past the end"] = s => { s.Position = 20; s.Write(new byte[3], 0, 0); return ""; },
        ["Write(empty) at the end"] = s => { s.Position = 16; s.Write([]); return ""; },
        ["Write(empty) inside"] = s => { s.Position = 3; s.Write([]); return ""; },
        ["Write(null,0,0)"] = s => { s.Write(null!, 0, 0); return ""; },
        ["Write(buffer,-1,1)"] = s => { s.Write(new byte[4], -1, 1); return ""; },
        ["Write(buffer,0,5) past the buffer"] = s => { s.Write(new byte[4], 0, 5); return ""; },
        ["Write 4 bytes at 14 (past a fixed capacity)"] = s => { s.Position = 14; s.Write([9, 8, 7, 6]); return ""; },
        ["Write 2 bytes at 14 (up to a fixed capacity)"] = s => { s.Position = 14; s.Write([9, 8]); return ""; },
        ["WriteByte"] = s => { s.WriteByte(42); return ""; },
        ["WriteByte at the end"] = s => { s.Position = 16; s.WriteByte(42); return ""; },
        ["WriteByte past the end"] = s => { s.Position = 18; s.WriteByte(42); return ""; },
        ["Seek(0,Begin)"] = s => s.Seek(0, SeekOrigin.Begin).ToString(CultureInfo.InvariantCulture),
        ["Seek(-1,Begin)"] = s => s.Seek(-1, SeekOrigin.Begin).ToString(CultureInfo.InvariantCulture),
        ["Seek(5,Current) twice"] = s => { s.Seek(5, SeekOrigin.Current); return s.Seek(5, SeekOrigin.Current).ToString(CultureInfo.InvariantCulture); },
        ["Seek(-5,End)"] = s => s.Seek(-5, SeekOrigin.End).ToString(CultureInfo.InvariantCulture),
        ["Seek(-17,End)"] = s => s.Seek(-17, SeekOrigin.End).ToString(CultureInfo.InvariantCulture),
        ["Seek(100,End)"] = s => s.Seek(100, SeekOrigin.End).ToString(CultureInfo.InvariantCulture),
        ["Seek(0,(SeekOrigin)7)"] = s => s.Seek(0, (SeekOrigin)7).ToString(CultureInfo.InvariantCulture),
        ["Seek(long.MinValue,Begin)"] = s => s.Seek(long.MinValue, SeekOrigin.Begin).ToString(CultureInfo.InvariantCulture),
        ["Seek(long.MaxValue,Current) from 1"] = s => { s.Position = 1; return s.Seek(long.MaxValue, SeekOrigin.Current).ToString(CultureInfo.InvariantCulture); },
        ["Seek(long.MaxValue,Begin)"] = s => s.Seek(long.MaxValue, SeekOrigin.Begin).ToString(CultureInfo.InvariantCulture),
        ["Seek(2^31,Begin)"] = s => s.Seek(1L << 31, SeekOrigin.Begin).ToString(CultureInfo.InvariantCulture),
        ["Position = long.MaxValue"] = s => { s.Position = long.MaxValue; return ""; },
        ["Position = -1"] = s => { s.Position = -1; return ""; },
        ["Position = 100"] = s => { s.Position = 100; return ""; },
        ["Position = 2^31"] = s => { s.Position = 1L << 31; return ""; },
        ["SetLength(-1)"] = s => { s.SetLength(-1); return ""; },
        ["SetLength(0)"] = s => { s.SetLength(0); return ""; },
        ["SetLength(5) from position 10"] = s => { s.Position = 10; s.SetLength(5); return ""; },
        ["SetLength(16)"] = s => { s.SetLength(16); return ""; },
        ["SetLength(40)"] = s => { s.SetLength(40); return ""; },
        ["SetLength(2^31)"] = s => { s.SetLength(1L << 31); return ""; },
        ["SetLength(long.MaxValue)"] = s => { s.SetLength(long.MaxValue); return ""; },
        ["Flush"] = s => { s.Flush(); return ""; },
        ["FlushAsync"] = s => Await(s.FlushAsync()),
        ["FlushAsync(canceled)"] = s => Await(s.FlushAsync(Canceled)),
        ["CopyTo(MemoryStream) from 3"] = s => { s.Position = 3; var d = new MemoryStream(); s.CopyTo(d); return Hex(d.ToArray()); },
        ["CopyTo(MemoryStream, 5) at the end"] = s => { s.Position = 16; var d = new MemoryStream(); s.CopyTo(d, 5); return Hex(d.ToArray()); },
        ["CopyTo(MemoryStream) past the end"] = s => { s.Position = 30; var d = new MemoryStream(); s.CopyTo(d); return Hex(d.ToArray()); },
        ["CopyTo(null)"] = s => { s.CopyTo(null!); return ""; },
        ["CopyTo(destination, 0)"] = s => { s.CopyTo(new MemoryStream(), 0); return ""; },
        ["CopyTo(read-only destination)"] = s => { s.CopyTo(new MemoryStream([], writable: false)); return ""; },
        ["CopyTo(disposed destination)"] = s => { var d = new MemoryStream(); d.Dispose(); s.CopyTo(d); return ""; },
        ["CopyToAsync(MemoryStream) from 3"] = s => { s.Position = 3; var d = new MemoryStream(); return Await(s.CopyToAsync(d)) + " " + Hex(d.ToArray()); },
        ["CopyToAsync(null)"] = s => Await(s.CopyToAsync(null!)),
        ["CopyToAsync(destination, -1)"] = s => Await(s.CopyToAsync(new MemoryStream(), -1)),
        ["CopyToAsync(canceled)"] = s => Await(s.CopyToAsync(new MemoryStream(), 81920, Canceled)),
        ["ReadAsync(byte[],0,4)"] = s => { var b = new byte[4]; return Await(s.ReadAsync(b, 0, 4)) + " " + Hex(b); },
        ["ReadAsync(null,0,1)"] = s => Await(s.ReadAsync(null!, 0, 1)),
        ["ReadAsync(buffer,3,2) past the buffer"] = s => Await(s.ReadAsync(new byte[4], 3, 2)),
        ["ReadAsync(Memory) of 40"] = s => { var b = new byte[40]; return Await(s.ReadAsync(b.AsMemory()).AsTask()) + " " + Hex(b); },
        ["ReadAsync(canceled)"] = s => Await(s.ReadAsync(new byte[4], 0, 4, Canceled)),
        ["ReadAsync(Memory, canceled)"] = s => Await(s.ReadAsync(new byte[4].AsMemory(), Canceled).AsTask()),
        ["WriteAsync(byte[],0,4)"] = s => Await(s.WriteAsync([1, 2, 3, 4], 0, 4)),
        ["WriteAsync(null,0,1)"] = s => Await(s.WriteAsync(null!, 0, 1)),
        ["WriteAsync(Memory) past the end"] = s => { s.Position = 20; return Await(s.WriteAsync(new byte[] { 5, 6 }.AsMemory()).AsTask()); },
        ["WriteAsync(empty Memory) past the end"] = s => { s.Position = 20; return Await(s.WriteAsync(ReadOnlyMemory<byte>.Empty).AsTask()); },
        ["WriteAsync(canceled)"] = s => Await(s.WriteAsync([1], 0, 1, Canceled)),
        ["WriteAsync(Memory, canceled)"] = s => Await(s.WriteAsync(new byte[] { 1 }.AsMemory(), Canceled).AsTask()),
        ["ToArray"] = s => Hex(ToArray(s)),
        ["ToArray from 5"] = s => { s.Position = 5; return Hex(ToArray(s)); },
        ["Length and Position"] = s => $"{s.Length} {s.Position}",
        ["Capacity"] = s => Capacity(s).ToString(CultureInfo.InvariantCulture),
        ["CanRead, CanWrite, CanSeek, CanTimeout"] = s => $"{s.CanRead} {s.CanWrite} {s.CanSeek} {s.CanTimeout}",
        ["ReadTimeout"] = s => s.ReadTimeout.ToString(CultureInfo.InvariantCulture),
        ["Dispose twice"] = s => { s.Dispose(); s.Dispose(); return ""; },
        ["Dispose, then Read"] = s => { s.Dispose(); return ReadArray(s, 4); },
        ["Dispose, then Read(null,0,1)"] = s => { s.Dispose(); return s.Read(null!, 0, 1).ToString(CultureInfo.InvariantCulture); },
        ["Dispose, then Read(span)"] = s => { s.Dispose(); return s.Read(new byte[4].AsSpan()).ToString(CultureInfo.InvariantCulture); },
        ["Dispose, then ReadByte"] = s => { s.Dispose(); return s.ReadByte().ToString(CultureInfo.InvariantCulture); },
        ["Dispose, then Write"] = s => { s.Dispose(); s.Write([1], 0, 1); return ""; },
        ["Dispose, then Write(empty)"] = s => { s.Dispose(); s.Write([]); return ""; },
        ["Dispose, then WriteByte"] = s => { s.Dispose(); s.WriteByte(1); return ""; },
        ["Dispose, then Seek"] = s => { s.Dispose(); return s.Seek(0, SeekOrigin.Begin).ToString(CultureInfo.InvariantCulture); },
        ["Dispose, then Position"] = s => { s.Dispose(); return s.Position.ToString(CultureInfo.InvariantCulture); },
        ["Dispose, then Position = 1"] = s => { s.Dispose(); s.Position = 1; return ""; },
        ["Dispose, then Position = -1"] = s => { s.Dispose(); s.Position = -1; return ""; },
        ["Dispose, then Length"] = s => { s.Dispose(); return s.Length.ToString(CultureInfo.InvariantCulture); },
        ["Dispose, then SetLength(4)"] = s => { s.Dispose(); s.SetLength(4); return ""; },
        ["Dispose, then SetLength(-1)"] = s => { s.Dispose(); s.SetLength(-1); return ""; },
        ["Dispose, then Flush"] = s => { s.Dispose(); s.Flush(); return ""; },
        ["Dispose, then FlushAsync"] = s => { s.Dispose(); return Await(s.FlushAsync()); },
        ["Dispose, then CopyTo"] = s => { s.Dispose(); s.CopyTo(new MemoryStream()); return ""; },
        ["Dispose, then CopyTo(null)"] = s => { s.Dispose(); s.CopyTo(null!); return ""; },
        ["Dispose, then CopyToAsync"] = s => { s.Dispose(); return Await(s.CopyToAsync(new MemoryStream())); },
        ["Dispose, then ReadAsync"] = s => { s.Dispose(); return Await(s.ReadAsync(new byte[4], 0, 4)); },
        ["Dispose, then ReadAsync(Memory)"] = s => { s.Dispose(); return Await(s.ReadAsync(new byte[4].AsMemory()).AsTask()); },
        ["Dispose, then WriteAsync"] = s => { s.Dispose(); return Await(s.WriteAsync([1], 0, 1)); },
        ["Dispose, then ToArray"] = s => { s.Dispose(); return Hex(ToArray(s)); },
        ["Dispose, then Capacity"] = s => { s.Dispose(); return Capacity(s).ToString(CultureInfo.InvariantCulture); },
    };

    /// <summary>
    /// The intended differences: (operation, kind or null for every kind) to what the native stream
    /// gives, and why. Each is checked both ways: the native stream gives this, and MemoryStream does not.
    /// </summary>
    private static readonly Dictionary<(string Operation, Kind? Kind), (string Native, string Why)> Differences = new()
    {
        // Lengths and positions are longs up to NativeMemoryStream.MaxLength; MemoryStream stops at int.MaxValue.
        [("Seek(2^31,Begin)", null)] = ("2147483648", "positions are longs"),
        [("Position = 2^31", null)] = ("", "positions are longs"),
        // A length past int.MaxValue is refused by a stream over an array (past its capacity) or a
        // read-only one as any length it cannot take; a growable one takes it (not run: 2 GiB).
        [("SetLength(2^31)", Kind.Fixed)] = ("throws NotSupportedException", "lengths are longs"),
        [("SetLength(2^31)", Kind.ReadOnly)] = ("throws NotSupportedException", "lengths are longs"),
        // After Dispose the memory is gone: ToArray cannot copy it (MemoryStream keeps its array).
        [("Dispose, then ToArray", null)] = ("throws ObjectDisposedException", "no backing array survives Dispose"),
        // MemoryStream checks writability before whether it is open; every other member of both says disposed.
        [("Dispose, then SetLength(4)", null)] = ("throws ObjectDisposedException", "after Dispose every member says disposed"),
    };

    private static CancellationToken Canceled => new(canceled: true);

    public static TheoryData<Kind> Kinds => new(Enum.GetValues<Kind>());

    [Theory]
    [MemberData(nameof(Kinds))]
    public void Every_member_at_its_edges_gives_the_result_exception_type_and_state_MemoryStream_gives(Kind kind)
    {
        var mismatches = new List<string>();
        foreach ((string operation, Func<Stream, string> run) in Operations)
        {
            if (operation == "SetLength(2^31)" && kind == Kind.Growable)
            {
                // Both would take 2 GiB and zero it.
                continue;
            }

            string managed = Run(run, NewManaged(kind));
            string native = Run(run, NewNative(kind));
            if (Differences.TryGetValue((operation, kind), out var intended) || Differences.TryGetValue((operation, null), out intended))
            {
                if (Result(native) != intended.Native || managed == native)
                {
                    mismatches.Add($"{operation} ({kind}, intended difference: {intended.Why}): MemoryStream gives [{managed}], NativeMemoryStream [{native}], documented [{intended.Native}]");
                }
            }
            else if (managed != native)
            {
                mismatches.Add($"{operation} ({kind}): MemoryStream gives [{managed}], NativeMemoryStream [{native}]");
            }
        }

        Assert.True(mismatches.Count == 0, string.Join(Environment.NewLine, mismatches));
    }

    [Fact]
    public void Positions_stop_at_MaxLength_lengths_past_it_throw_ArgumentOutOfRangeException_and_a_write_past_it_IOException()
    {
        using var stream = new NativeMemoryStream();
        stream.Position = NativeMemoryStream.MaxLength;
        Assert.Equal(NativeMemoryStream.MaxLength, stream.Seek(0, SeekOrigin.Current));
        Assert.Throws<IOException>(() => stream.WriteByte(1));
        Assert.Throws<ArgumentOutOfRangeException>(() => stream.Position = NativeMemoryStream.MaxLength + 1);
        Assert.Throws<ArgumentOutOfRangeException>(() => stream.Seek(1, SeekOrigin.Current));
        Assert.Throws<ArgumentOutOfRangeException>(() => stream.Seek(NativeMemoryStream.MaxLength + 1, SeekOrigin.Begin));
        Assert.Throws<ArgumentOutOfRangeException>(() => stream.SetLength(NativeMemoryStream.MaxLength + 1));
        Assert.Equal(NativeMemoryStream.MaxLength, stream.Position);
        Assert.Equal(0, stream.Length);
    }

    [Fact]
    public void The_table_covers_every_public_member_a_NativeMemoryStream_declares()
    {
        string[] members = typeof(NativeMemoryStream).GetMembers(System.Reflection.BindingFlags.Public | System.Reflection.BindingFlags.Instance | System.Reflection.BindingFlags.DeclaredOnly)
            .Where(member => member is System.Reflection.MethodInfo { IsSpecialName: false } or System.Reflection.PropertyInfo)
            .Select(member => member.Name)
            .Distinct()
            .ToArray();
        string[] missing = members.Where(name => name != "CanGrow" && !Operations.Keys.Any(key => key.Contains(name, StringComparison.Ordinal))).ToArray();
        Assert.True(missing.Length == 0, "members without a row: " + string.Join(", ", missing));
    }

    private static MemoryStream NewManaged(Kind kind)
    {
        if (kind == Kind.Growable)
        {
            var stream = new MemoryStream();
            stream.Write(Start);
            stream.Position = 0;
            return stream;
        }

        return new MemoryStream(Start.ToArray(), writable: kind == Kind.Fixed);
    }

    private static NativeMemoryStream NewNative(Kind kind)
    {
        if (kind == Kind.Growable)
        {
            var stream = new NativeMemoryStream();
            stream.Write(Start);
            stream.Position = 0;
            return stream;
        }

        return new NativeMemoryStream(new SafeArray<byte>(Start), writable: kind == Kind.Fixed);
    }

    private static string Run(Func<Stream, string> operation, Stream stream)
    {
        try
        {
            string result;
            try
            {
                result = operation(stream);
            }
            catch (Exception e)
            {
                result = $"throws {e.GetType().Name}";
            }

            return $"{result} | {State(stream)}";
        }
        finally
        {
            stream.Dispose();
        }
    }

    private static string Result(string outcome) => outcome[..outcome.IndexOf(" | ", StringComparison.Ordinal)];

    private static string State(Stream stream) =>
        stream.CanSeek
            ? $"len={stream.Length} pos={stream.Position} r={stream.CanRead} w={stream.CanWrite} data={Hex(ToArray(stream))}"
            : $"closed r={stream.CanRead} w={stream.CanWrite}";

    private static string ReadArray(Stream stream, int count)
    {
        var buffer = new byte[count];
        int read = stream.Read(buffer, 0, count);
        return $"{read} {Hex(buffer)}";
    }

    /// <summary>A task's outcome, telling a task that failed from a call that threw at once (which the caller records).</summary>
    private static string Await(Task task)
    {
        Assert.True(((IAsyncResult)task).AsyncWaitHandle.WaitOne(TimeSpan.FromSeconds(30)), "the task completed");
        return task.Status switch
        {
            TaskStatus.Canceled => "task canceled",
            TaskStatus.Faulted => $"task faulted {task.Exception!.InnerException!.GetType().Name}",
            _ => task is Task<int> counted ? $"task {counted.Result}" : "task done",
        };
    }

    private static byte[] ToArray(Stream stream) => stream is MemoryStream managed ? managed.ToArray() : ((NativeMemoryStream)stream).ToArray();

    private static long Capacity(Stream stream) => stream is MemoryStream managed ? managed.Capacity : ((NativeMemoryStream)stream).Capacity;

    private static string Hex(byte[] bytes) => Convert.ToHexString(bytes);
}
