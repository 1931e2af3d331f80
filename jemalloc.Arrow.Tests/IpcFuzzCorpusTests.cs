using Xunit.Abstractions;

namespace jemalloc.Arrow.Tests;

/// <summary>
/// Arrow's fuzz and crash inputs (Corpus/arrow-testing/fuzz: the clusterfuzz-testcase-* and crash-*
/// files that once broke an Arrow reader), each opened as a file and as a stream and read through
/// every column: the end is a read or one of the exceptions the reader documents for bad input
/// (<see cref="InvalidDataException"/> for malformed input, <see cref="NotSupportedException"/> for a
/// type or codec it does not read, <see cref="InvalidOperationException"/> for a column of no rows read
/// into an array), never another exception, a crash or a leak (the ledger ends where it began).
/// </summary>
public sealed class IpcFuzzCorpusTests(ITestOutputHelper output) : LedgerBalanced
{
    public static TheoryData<string> Files() => new(IpcCorpus.FuzzFiles());

    [Theory]
    [MemberData(nameof(Files))]
    public void A_fuzz_input_read_as_file_and_as_stream_is_read_or_refused_with_a_documented_exception(string file)
    {
        string path = Path.Combine(IpcCorpus.Root, file);
        Assert.True(File.Exists(path), path);
        foreach (ArrowIpcFormat format in new[] { ArrowIpcFormat.File, ArrowIpcFormat.Stream })
        {
            foreach (bool fromPath in new[] { true, false })
            {
                string outcome = ReadEverything(path, format, fromPath);
                output.WriteLine($"{file} as {format}{(fromPath ? " (path)" : " (stream)")}: {outcome}");
            }
        }
    }

    // Opens the input and reads every column; the outcome, or the documented exception's type and message.
    private static string ReadEverything(string path, ArrowIpcFormat format, bool fromPath)
    {
        try
        {
            using ArrowIpcReader reader = fromPath ? new ArrowIpcReader(path, format) : new ArrowIpcReader(new MemoryStream(File.ReadAllBytes(path)), format);
            int read = 0;
            var refusals = new List<string>();
            foreach (ArrowIpcField field in reader.Fields)
            {
                if (reader.Fields.Count(f => f.Name == field.Name) > 1)
                {
                    // A name another column has: a read by it is refused rather than pick one.
                    ArgumentException ambiguous = Assert.Throws<ArgumentException>(() => IpcCorpus.ReadColumn(reader, field));
                    Assert.Contains($"named '{field.Name}'", ambiguous.Message, StringComparison.Ordinal);
                    refusals.Add("duplicate name");
                    continue;
                }

                try
                {
                    IpcCorpus.ReadColumn(reader, field);
                    read++;
                }
                catch (Exception e) when (e is InvalidDataException or NotSupportedException or InvalidOperationException)
                {
                    Assert.False(string.IsNullOrEmpty(e.Message));
                    refusals.Add(e.GetType().Name);
                }
            }

            return $"opened, {reader.Fields.Count} columns, {reader.BatchCount} batches: {read} read, {refusals.Count} refused ({string.Join(", ", refusals.Distinct())})";
        }
        catch (InvalidDataException e)
        {
            Assert.False(string.IsNullOrEmpty(e.Message));
            return "not opened: InvalidDataException: " + e.Message;
        }
    }
}
