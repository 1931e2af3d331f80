namespace jemalloc.Arrow.Tests;

/// <summary>
/// Arrow's integration files (Corpus/arrow-testing/integration) with bytes changed at random (a fixed
/// seed per file, so a failure is repeatable), each read through every column as a file and as a
/// stream: a read or a documented exception (<see cref="InvalidDataException"/>,
/// <see cref="NotSupportedException"/>, <see cref="InvalidOperationException"/>), never another
/// exception, a crash or a leak.
/// </summary>
public sealed class IpcCorpusMutationTests : LedgerBalanced
{
    // 200 a file keeps the run to seconds; a run of 5,000 a file (440,000 reads) found no defect either.
    private const int Mutations = 200;

    public static TheoryData<string> Files() =>
        new(Directory.EnumerateFiles(Path.Combine(IpcCorpus.Root, "integration"), "*", SearchOption.AllDirectories)
            // The decimal files are large and refused whole (their values pass their precision): they would add time, not paths.
            .Where(p => !p.Contains("decimal", StringComparison.Ordinal))
            .Select(p => Path.GetRelativePath(IpcCorpus.Root, p).Replace('\\', '/'))
            .Order(StringComparer.Ordinal));

    [Theory]
    [MemberData(nameof(Files))]
    public void An_integration_file_with_bytes_changed_at_random_is_read_or_refused_with_a_documented_exception(string file)
    {
        byte[] original = File.ReadAllBytes(Path.Combine(IpcCorpus.Root, file));
        var random = new Random((file.Length * 7919) + original.Length);
        for (int m = 0; m < Mutations; m++)
        {
            byte[] mutated = (byte[])original.Clone();
            int changes = 1 + random.Next(4);
            for (int c = 0; c < changes; c++)
            {
                int at = random.Next(mutated.Length);
                mutated[at] = random.Next(3) switch
                {
                    0 => (byte)random.Next(256),
                    1 => (byte)(mutated[at] ^ (1 << random.Next(8))),
                    _ => random.Next(2) == 0 ? (byte)0 : (byte)0xFF,
                };
            }

            foreach (ArrowIpcFormat format in new[] { ArrowIpcFormat.File, ArrowIpcFormat.Stream })
            {
                Exception? e = Record.Exception(() => ReadEverything(mutated, format));
                Assert.True(e is null or InvalidDataException or NotSupportedException or InvalidOperationException, $"{file}, mutation {m}, as {format}: {e}");
            }
        }
    }

    private static void ReadEverything(byte[] input, ArrowIpcFormat format)
    {
        using var reader = new ArrowIpcReader(new MemoryStream(input), format);
        foreach (ArrowIpcField field in reader.Fields)
        {
            try
            {
                IpcCorpus.ReadColumn(reader, field);
            }
            catch (ArgumentException e) when (reader.Fields.Count(f => f.Name == field.Name) > 1)
            {
                // A name another column has (a changed byte may make one): a read by it is refused.
                Assert.Contains($"named '{field.Name}'", e.Message, StringComparison.Ordinal);
            }
            catch (Exception e) when (e is InvalidDataException or NotSupportedException or InvalidOperationException)
            {
                // Refused: the next column is still read.
            }
        }
    }
}
