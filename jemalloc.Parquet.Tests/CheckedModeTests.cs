namespace jemalloc.Parquet.Tests;

/// <summary>
/// The add-on's columns follow the ledger's rules like any structure's: in checked mode a column read
/// from a file and then disposed is poisoned and quarantined, not handed straight back to jemalloc.
/// Checked mode is process-wide, so these tests run alone.
/// </summary>
[Collection(CheckedModeAlone.Name)]
public sealed class CheckedModeTests : IDisposable
{
    private readonly TempFolder _folder = new();

    public void Dispose() => _folder.Dispose();

    [Fact]
    public void A_column_read_and_disposed_in_checked_mode_is_quarantined()
    {
        string path = _folder.File("checked.parquet");
        using (var values = new HugeArray<long>(1000))
        {
            for (long i = 0; i < values.Length; i++)
            {
                values[i] = i * 3;
            }

            new NativeParquetWriter().Add("v", values).Write(path);
        }

        bool was = AllocationLedger.CheckedMode;
        AllocationLedger.CheckedMode = true;
        try
        {
            AllocationLedger.FlushQuarantine();
            using (var reader = new NativeParquetReader(path))
            {
                HugeArray<long> column = reader.ReadColumn<long>("v");
                Assert.Equal(2997L, column[999]);
                column.Dispose();
            }

            Assert.True(AllocationLedger.QuarantinedBytes >= 1000 * sizeof(long), $"{AllocationLedger.QuarantinedBytes:N0} bytes quarantined");
        }
        finally
        {
            AllocationLedger.FlushQuarantine();
            AllocationLedger.CheckedMode = was;
        }
    }
}

/// <summary>Tests that switch the process-wide checked mode: run alone.</summary>
[CollectionDefinition(Name, DisableParallelization = true)]
public sealed class CheckedModeAlone
{
    public const string Name = "checked mode";
}
