namespace jemalloc.Arrow.Tests;

/// <summary>
/// <see cref="ArrowIpcWriter.Write(string, ArrowIpcFormat)"/> never destroys what was at its path (the
/// cases are common/Tests/FileReplacementCases.cs); its mid-write failure is a string column whose
/// offsets were changed past its data block in the third batch, after two batches were written.
/// </summary>
public sealed class IpcFileReplacementTests : FileReplacementCases
{
    protected override void WriteGood(string path)
    {
        using HugeArray<long> values = GoodValues();
        new ArrowIpcWriter { BatchSize = 8 }.Add("v", values).Write(path);
    }

    protected override void CheckGood(string path)
    {
        using var reader = new ArrowIpcReader(path);
        Assert.Equal(ArrowIpcFormat.File, reader.Format);
        Assert.Equal(4, reader.BatchCount);
        using HugeArray<long> values = reader.ReadColumn<long>("v");
        AssertGoodValues(values);
    }

    protected override Type ExpectedFor(Failure failure) => failure switch
    {
        Failure.NoColumn => typeof(InvalidOperationException),
        Failure.DisposedColumn => typeof(ObjectDisposedException),
        _ => typeof(InvalidDataException),
    };

    protected override void WriteFailing(Failure failure, string path)
    {
        switch (failure)
        {
            case Failure.NoColumn:
                new ArrowIpcWriter().Write(path);
                break;
            case Failure.DisposedColumn:
                var gone = new HugeArray<long>(GoodRows);
                var writer = new ArrowIpcWriter().Add("gone", gone);
                gone.Dispose();
                writer.Write(path);
                break;
            default:
                var builder = new NativeStringColumnBuilder();
                for (int i = 0; i < GoodRows; i++)
                {
                    builder.Append($"value {i}");
                }

                using (NativeStringColumn strings = builder.Build())
                {
                    builder.Dispose();
                    strings.Offsets[24] = strings.Data.Length + 100;
                    new ArrowIpcWriter { BatchSize = 8 }.Add("s", strings).Write(path);
                }

                break;
        }
    }
}
