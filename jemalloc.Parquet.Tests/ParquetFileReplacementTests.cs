namespace jemalloc.Parquet.Tests;

/// <summary>
/// <see cref="NativeParquetWriter.Write"/> never destroys what was at its path (the cases are
/// common/Tests/FileReplacementCases.cs); its mid-write failure is a decimal with more digits than its
/// precision in the last row group, after three were written.
/// </summary>
public sealed class ParquetFileReplacementTests : FileReplacementCases
{
    private const int Rows = 32;

    // ParquetSharp seeks in the file it writes, which a pipe refuses.
    protected override bool WritesPipes => false;

    protected override void WriteGood(string path)
    {
        using var values = new HugeArray<long>(Rows);
        for (int i = 0; i < Rows; i++)
        {
            values[i] = i * 7L;
        }

        new NativeParquetWriter { RowGroupSize = 8 }.Add("v", values).Write(path);
    }

    protected override void CheckGood(string path)
    {
        using var reader = new NativeParquetReader(path);
        Assert.Equal(Rows, reader.RowCount);
        using HugeArray<long> values = reader.ReadColumn<long>("v");
        for (int i = 0; i < Rows; i++)
        {
            Assert.Equal(i * 7L, values[i]);
        }
    }

    protected override Type ExpectedFor(Failure failure) => failure switch
    {
        Failure.NoColumn => typeof(InvalidOperationException),
        Failure.DisposedColumn => typeof(ObjectDisposedException),
        _ => typeof(InvalidOperationException),
    };

    protected override void WriteFailing(Failure failure, string path)
    {
        switch (failure)
        {
            case Failure.NoColumn:
                new NativeParquetWriter().Write(path);
                break;
            case Failure.DisposedColumn:
                var gone = new HugeArray<long>(Rows);
                var writer = new NativeParquetWriter().Add("gone", gone);
                gone.Dispose();
                writer.Write(path);
                break;
            default:
                var values = new HugeArray<Int128>(Rows, 12);
                values[Rows - 1] = 123_456; // six digits in a DECIMAL(5, 2)
                using (var decimals = new DecimalColumn(values, null, Rows, 5, 2))
                {
                    new NativeParquetWriter { RowGroupSize = 8 }.Add("d", decimals).Write(path);
                }

                break;
        }
    }
}
