using jemalloc.Tests.Support;

namespace jemalloc.Tests.Records;

/// <summary>The worked record table of docs/records.md, its answers checked, and a reset of its names.</summary>
[Collection(LeakChecked.Name)]
public sealed class RecordTableExampleTests : LeakCheckedTest
{
    [Fact]
    public void The_readme_record_table_example_works_as_printed()
    {
        const long count = 100_000;
        AllocationOptions options = AllocationOptions.WithHugePages;      // fewer TLB misses on random access
        using var names = new Utf8StringStore(16 << 20, options);
        using var rows = new HugeArray<Customer>(count, options);
        using var scores = new HugeArray<double>(count, options);         // a column of its own, for SIMD scans
        using var byId = new NativeHashIndex<long>(count, options);
        for (long row = 0; row < count; row++)
        {
            long id = 1000 + row;
            rows[row] = new Customer { Id = id, Name = names.Add(row % 2 == 0 ? $"Jo {row}" : $"Zoë {row}"), Category = (int)(row % 7) };
            scores[row] = row % 100;
            byId.Add(id, row);
        }

        // Look a customer up by id.
        Assert.True(byId.TryGetValue(1042, out long r));
        Assert.Equal("Jo 42", rows[r].Name.ToString());

        // Many lookups under one lease of the index: -1 marks an id it does not hold.
        long[] ids = [1000, 1001, 7];
        long[] found = new long[ids.Length];
        Assert.Equal(2, byId.TryGetValues(ids, found));
        Assert.Equal([0L, 1L, -1L], found);

        // Customers among rows [0, 1000) with a score from 50 to 60 whose name starts with "Jo".
        int[] hits = new int[1000];
        int candidates = ColumnScan.FindInRange(scores, 0, 1000, 50, 60, hits);
        int jo = 0;
        using (MemoryLease<Customer> lease = rows.Lease())                // rows read as a span, no per-row check
        using (names.EnterRead())                                         // no Reset/Dispose meanwhile
        {
            ReadOnlySpan<Customer> window = lease.AsSpan(0, 1000);
            for (int i = 0; i < candidates; i++)
            {
                jo += window[hits[i]].Name.StartsWith("Jo"u8) ? 1 : 0;
            }
        }

        Assert.Equal(110, candidates);
        Assert.Equal(60, jo);

        // Rename one: the new name is appended, the old bytes wait for a reset.
        Customer customer = rows[r];
        customer.Name = names.Replace(customer.Name, "Joanna");
        rows[r] = customer;
        Assert.Equal("Joanna", rows[r].Name.ToString());
        Assert.Equal("Jo 42".Length, names.AbandonedBytes);

        // A reset frees every name at once; every value handed out before now throws.
        StoredUtf8String stale = rows[r].Name;
        names.Reset();
        Assert.Throws<ObjectDisposedException>(() => stale.ToString());
    }
}
