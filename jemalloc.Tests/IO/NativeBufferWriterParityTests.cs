using System.Globalization;
using System.Buffers;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.IO;

/// <summary>
/// One table of operations over the members <see cref="NativeBufferWriter{T}"/> shares with
/// <see cref="ArrayBufferWriter{T}"/>, at their edges (negative, zero and past-the-free-space
/// arguments, growth, clear and reset), run on both from the same start: the result, the exception's
/// type and the state afterwards (count, capacity, free capacity, written elements) must be the same,
/// except for the intended differences listed in <see cref="Differences"/>, each checked as documented.
/// </summary>
[Collection(LeakChecked.Name)]
public sealed class NativeBufferWriterParityTests : LeakCheckedTest
{
    private static readonly Dictionary<string, Func<IWriter, string>> Operations = new()
    {
        ["GetSpan(0)"] = w => (w.GetSpan(0).Length >= 1).ToString(CultureInfo.InvariantCulture),
        ["GetSpan(-1)"] = w => w.GetSpan(-1).Length.ToString(CultureInfo.InvariantCulture),
        ["GetMemory(0)"] = w => (w.GetMemory(0).Length >= 1).ToString(CultureInfo.InvariantCulture),
        ["GetMemory(-1)"] = w => w.GetMemory(-1).Length.ToString(CultureInfo.InvariantCulture),
        ["GetSpan(10) is the whole free space"] = w => { int length = w.GetSpan(10).Length; return (length == w.FreeCapacity).ToString(CultureInfo.InvariantCulture); },
        ["Advance(0)"] = w => { w.Advance(0); return ""; },
        ["Advance(-1)"] = w => { w.Advance(-1); return ""; },
        ["Advance(1) before any GetSpan"] = w => { w.Advance(1); long count = w.WrittenCount; w.ResetWrittenCount(); return count.ToString(CultureInfo.InvariantCulture); },
        ["Advance(FreeCapacity)"] = w => { w.GetSpan(1).Fill(7); w.Advance((int)w.FreeCapacity); return ""; },
        ["Advance(FreeCapacity + 1)"] = w => { w.GetSpan(1).Fill(7); w.Advance((int)w.FreeCapacity + 1); return ""; },
        ["Advance(int.MaxValue)"] = w => { _ = w.GetSpan(1); w.Advance(int.MaxValue); return ""; },
        ["Write 1..5"] = w => { Write(w, 5); return ""; },
        ["Write 1..5 through GetMemory"] = w => { Memory<int> memory = w.GetMemory(5); for (int i = 0; i < 5; i++) { memory.Span[i] = i + 1; } w.Advance(5); return ""; },
        ["Write 300 then GetSpan(10)"] = w => { Write(w, 300); return (w.GetSpan(10).Length >= 10).ToString(CultureInfo.InvariantCulture); },
        ["Write 100 then GetSpan(200)"] = w => { Write(w, 100); return (w.GetSpan(200).Length >= 200).ToString(CultureInfo.InvariantCulture); },
        ["Write 100 then GetSpan(600)"] = w => { Write(w, 100); return (w.GetSpan(600).Length >= 600).ToString(CultureInfo.InvariantCulture); },
        ["Write 5 then Clear"] = w => { Write(w, 5); w.Clear(); return ""; },
        ["Write 5 then ResetWrittenCount"] = w => { Write(w, 5); w.ResetWrittenCount(); return ""; },
        ["Write 5, Clear, GetSpan(5) reads zeros"] = w => { Write(w, 5); w.Clear(); return string.Join(",", w.GetSpan(5)[..5].ToArray()); },
        ["Clear when empty"] = w => { w.Clear(); return ""; },
        ["ResetWrittenCount when empty"] = w => { w.ResetWrittenCount(); return ""; },
        ["Write 5, Advance(-1)"] = w => { Write(w, 5); w.Advance(-1); return ""; },
        ["Write 5, Advance(FreeCapacity + 1)"] = w => { Write(w, 5); w.Advance((int)w.FreeCapacity + 1); return ""; },
        ["Capacity after Write 100 then GetSpan(600)"] = w => { Write(w, 100); _ = w.GetSpan(600); return w.Capacity.ToString(CultureInfo.InvariantCulture); },
        ["Capacity after GetSpan(0)"] = w => { _ = w.GetSpan(0); return w.Capacity.ToString(CultureInfo.InvariantCulture); },
        ["WrittenCount, Capacity, FreeCapacity when new"] = w => $"{w.WrittenCount} {w.Capacity} {w.FreeCapacity}",
    };

    /// <summary>
    /// The intended differences: (operation, initial capacity or null for both) to what the native
    /// writer gives, and why. Each is checked both ways: the native writer gives this, and ArrayBufferWriter does not.
    /// </summary>
    private static readonly Dictionary<(string Operation, int? Initial), (string Native, string Why)> Differences = new()
    {
        // A negative count or size hint is an ArgumentOutOfRangeException, which is an ArgumentException
        // (a catch of ArgumentException still catches it, and ParamName is the same); ArrayBufferWriter throws a plain one.
        [("Advance(-1)", null)] = ("throws ArgumentOutOfRangeException", "ArgumentOutOfRangeException, a subclass"),
        [("Write 5, Advance(-1)", null)] = ("throws ArgumentOutOfRangeException", "ArgumentOutOfRangeException, a subclass"),
        [("GetSpan(-1)", null)] = ("throws ArgumentOutOfRangeException", "ArgumentOutOfRangeException, a subclass"),
        [("GetMemory(-1)", null)] = ("throws ArgumentOutOfRangeException", "ArgumentOutOfRangeException, a subclass"),
        // Growth: ArrayBufferWriter grows by the larger of the size hint and its capacity; the native
        // writer doubles (at least 256 elements) and, where doubling is not enough, grows to exactly
        // the count written plus the hint. (Capacities are otherwise left out of the compared state.)
        [("Capacity after Write 100 then GetSpan(600)", 0)] = ("700", "growth policy"),
        [("Capacity after Write 100 then GetSpan(600)", 10)] = ("700", "growth policy"),
    };

    [Theory]
    [InlineData(0)]
    [InlineData(10)]
    public void Every_shared_member_at_its_edges_gives_the_result_exception_type_and_state_ArrayBufferWriter_gives(int initialCapacity)
    {
        var mismatches = new List<string>();
        foreach ((string operation, Func<IWriter, string> run) in Operations)
        {
            string managed = Run(run, new Managed(initialCapacity == 0 ? new ArrayBufferWriter<int>() : new ArrayBufferWriter<int>(initialCapacity)));
            string native;
            using (var writer = initialCapacity == 0 ? new NativeBufferWriter<int>() : new NativeBufferWriter<int>(initialCapacity))
            {
                native = Run(run, new Native(writer));
            }

            if (Differences.TryGetValue((operation, initialCapacity), out var intended) || Differences.TryGetValue((operation, null), out intended))
            {
                if (Result(native) != intended.Native || managed == native)
                {
                    mismatches.Add($"{operation} (from {initialCapacity}, intended difference: {intended.Why}): ArrayBufferWriter gives [{managed}], NativeBufferWriter [{native}], documented [{intended.Native}]");
                }
            }
            else if (managed != native)
            {
                mismatches.Add($"{operation} (from {initialCapacity}): ArrayBufferWriter gives [{managed}], NativeBufferWriter [{native}]");
            }
        }

        Assert.True(mismatches.Count == 0, string.Join(Environment.NewLine, mismatches));
    }

    [Theory]
    [InlineData(0)]
    [InlineData(-1)]
    public void A_constructor_given_no_room_throws_an_ArgumentException_as_ArrayBufferWriter_does_naming_the_argument(int initialCapacity)
    {
        ArgumentException managed = Assert.ThrowsAny<ArgumentException>(() => new ArrayBufferWriter<int>(initialCapacity));
        // Intended difference: ArgumentOutOfRangeException, the subclass that says the value is out of range.
        ArgumentOutOfRangeException native = Assert.Throws<ArgumentOutOfRangeException>(() => new NativeBufferWriter<int>(initialCapacity));
        Assert.Equal(managed.ParamName, native.ParamName);
    }

    [Fact]
    public void The_table_covers_every_public_member_the_two_writers_share()
    {
        string[] shared = typeof(ArrayBufferWriter<int>).GetMembers(System.Reflection.BindingFlags.Public | System.Reflection.BindingFlags.Instance | System.Reflection.BindingFlags.DeclaredOnly)
            .Where(member => member is System.Reflection.MethodInfo { IsSpecialName: false } or System.Reflection.PropertyInfo)
            .Select(member => member.Name)
            .Intersect(typeof(NativeBufferWriter<int>).GetMembers().Select(member => member.Name))
            .Distinct()
            .ToArray();
        Assert.Contains("Advance", shared);
        string[] missing = shared.Where(name => name != "WrittenSpan" && !Operations.Keys.Any(key => key.Contains(name, StringComparison.Ordinal))).ToArray();
        Assert.True(missing.Length == 0, "members without a row: " + string.Join(", ", missing));
    }

    private static void Write(IWriter writer, int count)
    {
        Span<int> span = writer.GetSpan(count);
        for (int i = 0; i < count; i++)
        {
            span[i] = i + 1;
        }

        writer.Advance(count);
    }

    private static string Run(Func<IWriter, string> operation, IWriter writer)
    {
        string result;
        try
        {
            result = operation(writer);
        }
        catch (Exception e)
        {
            result = $"throws {e.GetType().Name}";
        }

        // The written elements (WrittenSpan) are part of the state; the capacity is not (the growth
        // policies differ), but what both promise of it is checked.
        Assert.True(writer.Capacity >= writer.WrittenCount && writer.FreeCapacity == writer.Capacity - writer.WrittenCount, $"the capacity holds the count after {result}");
        return $"{result} | count={writer.WrittenCount}" + (writer.WrittenCount > 0 ? $" data={string.Join(",", writer.Written)}" : "");
    }

    private static string Result(string outcome) => outcome[..outcome.IndexOf(" | ", StringComparison.Ordinal)];

    /// <summary>What both writers have, so one table runs on both.</summary>
    private interface IWriter
    {
        long WrittenCount { get; }

        long Capacity { get; }

        long FreeCapacity { get; }

        int[] Written { get; }

        Span<int> GetSpan(int sizeHint);

        Memory<int> GetMemory(int sizeHint);

        void Advance(int count);

        void Clear();

        void ResetWrittenCount();
    }

    private sealed class Managed(ArrayBufferWriter<int> writer) : IWriter
    {
        public long WrittenCount => writer.WrittenCount;

        public long Capacity => writer.Capacity;

        public long FreeCapacity => writer.FreeCapacity;

        public int[] Written => writer.WrittenSpan.ToArray();

        public Span<int> GetSpan(int sizeHint) => writer.GetSpan(sizeHint);

        public Memory<int> GetMemory(int sizeHint) => writer.GetMemory(sizeHint);

        public void Advance(int count) => writer.Advance(count);

        public void Clear() => writer.Clear();

        public void ResetWrittenCount() => writer.ResetWrittenCount();
    }

    private sealed class Native(NativeBufferWriter<int> writer) : IWriter
    {
        public long WrittenCount => writer.WrittenCount;

        public long Capacity => writer.Capacity;

        public long FreeCapacity => writer.FreeCapacity;

        public int[] Written => writer.WrittenSpan.ToArray();

        public Span<int> GetSpan(int sizeHint) => writer.GetSpan(sizeHint);

        public Memory<int> GetMemory(int sizeHint) => writer.GetMemory(sizeHint);

        public void Advance(int count) => writer.Advance(count);

        public void Clear() => writer.Clear();

        public void ResetWrittenCount() => writer.ResetWrittenCount();
    }
}
