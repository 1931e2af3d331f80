namespace jemalloc.Parquet.Tests;

/// <summary>
/// <see cref="NativeParquetWriter.Write"/> never destroys what was at its path (the cases are
/// common/Tests/FileReplacementCases.cs); its mid-write failure is a decimal with more digits than its
/// precision in the last row group, after three were written.
/// </summary>
public sealed class ParquetFileReplacementTests : FileReplacementCases
{
    // ParquetSharp seeks in the file it writes, which a pipe refuses.
    protected override bool WritesPipes => false;

    protected override void WriteGood(string path)
    {
        using HugeArray<long> values = GoodValues();
        new NativeParquetWriter { RowGroupSize = 8 }.Add("v", values).Write(path);
    }

    protected override void CheckGood(string path)
    {
        using var reader = new NativeParquetReader(path);
        Assert.Equal(GoodRows, reader.RowCount);
        using HugeArray<long> values = reader.ReadColumn<long>("v");
        AssertGoodValues(values);
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
                var gone = new HugeArray<long>(GoodRows);
                var writer = new NativeParquetWriter().Add("gone", gone);
                gone.Dispose();
                writer.Write(path);
                break;
            default:
                var values = new HugeArray<Int128>(GoodRows, 12);
                values[GoodRows - 1] = 123_456; // six digits in a DECIMAL(5, 2)
                using (var decimals = new DecimalColumn(values, null, GoodRows, 5, 2))
                {
                    new NativeParquetWriter { RowGroupSize = 8 }.Add("d", decimals).Write(path);
                }

                break;
        }
    }
}
