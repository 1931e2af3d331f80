using Apache.Arrow;

namespace jemalloc.Arrow.Tests;

/// <summary>
/// The add-on's native memory follows the ledger's rules like any structure's: in checked mode a buffer
/// Arrow disposes is poisoned and quarantined, not handed straight back to jemalloc. Checked mode is
/// process-wide, so these tests run alone.
/// </summary>
[Collection(CheckedModeAlone.Name)]
public sealed class CheckedModeTests
{
    [Fact]
    public void An_Arrow_buffer_disposed_in_checked_mode_is_quarantined()
    {
        bool was = AllocationLedger.CheckedMode;
        AllocationLedger.CheckedMode = true;
        try
        {
            AllocationLedger.FlushQuarantine();
            var allocator = new JemallocArrowAllocator();
            var builder = new Int64Array.Builder();
            for (long i = 0; i < 1000; i++)
            {
                builder.Append(i);
            }

            Int64Array array = builder.Build(allocator);
            Assert.Equal(999L, array.GetValue(999));
            array.Dispose();

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
