using System.Buffers;
using System.IO.Pipelines;
using System.Text;
using System.Text.Json;
using jemalloc.Tests.Records;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.Docs;

/// <summary>
/// The C# examples of README.md and docs/, as tests. The text between <c>#region example: ID</c> and
/// <c>#endregion</c> is printed, as it is here, under the marker <c>&lt;!-- example: ID --&gt;</c> of a
/// Markdown page; <see cref="DocumentationTests"/> fails when the two differ.
/// </summary>
[Collection(LeakChecked.Name)]
public sealed class DocExampleTests : LeakCheckedTest
{
    #region example: employee-struct
    public struct Employee : IEquatable<Employee>
    {
        public Guid Id { get; set; }
        public FixedUtf8String Name { get; set; }
        public decimal Salary { get; set; }
        public FixedBuffer<float> Bonuses { get; set; }

        public readonly bool Equals(Employee other) => Id == other.Id;
        public override readonly bool Equals(object? obj) => obj is Employee other && Equals(other);
        public override readonly int GetHashCode() => Id.GetHashCode();
        public static bool operator ==(Employee left, Employee right) => left.Equals(right);
        public static bool operator !=(Employee left, Employee right) => !left.Equals(right);
    }
    #endregion

    [Fact]
    public void FixedBuffer_tour()
    {
        #region example: fixedbuffer-basics
        var prices = new FixedBuffer<double>(1_000_000);   // reads as zero, in native memory
        prices.Fill(9.99);
        prices[10] = 12.5;               // checked write
        double p = prices[10];           // checked read (a copy)

        FixedBuffer<double> alias = prices;   // copies the handle, not the memory
        alias.Free();                         // frees it for every copy
        Assert.Throws<ObjectDisposedException>(() => prices[10]);
        #endregion

        Assert.Equal(12.5, p);
        Assert.False(prices.IsValid);
    }

    [Fact]
    public void Employee_records_in_a_SafeArray()
    {
        #region example: employee-array
        using var staff = new SafeArray<Employee>(100);
        staff[0] = new Employee { Id = Guid.NewGuid(), Name = new FixedUtf8String("Ada"), Bonuses = new FixedBuffer<float>(12) };
        string name = staff[0].Name.ToString();            // "Ada"

        // The array frees its own block. The name and the bonuses are blocks of their own that an element
        // only points to: free them before the array goes, or they stay allocated.
        Employee ada = staff[0];
        ada.Name.Free();
        ada.Bonuses.Free();
        #endregion

        Assert.Equal("Ada", name);
        Assert.False(ada.Name.IsValid);
        Assert.False(ada.Bonuses.IsValid);
        Assert.False(staff[0].Bonuses.IsValid); // the element's copy of the handle sees the free too
        Assert.Equal(default, staff[1]);
    }

    /// <summary>Compiled, not run: the array takes 16.8 GB.</summary>
    internal static int HugeArrayTour()
    {
        #region example: hugearray-basics
        using var big = new HugeArray<int>(4_200_000_000);     // 16.8 GB, one block, indexed by long
        big[4_199_999_999] = 7;
        big.VectorFill(1);                                     // SIMD, chunk by chunk
        big.ParallelVectorMultiply(3);                         // SIMD on every core
        int max = big.ParallelVectorMax();                     // 3
        using (var lease = big.Lease())
        {
            foreach (Span<int> chunk in lease.GetChunks()) { /* each part, at most 1 GiB, as a span */ }
        }
        #endregion
        return max;
    }

    [Fact]
    public void HugeArray_tour_compiles_and_its_operations_run_on_a_small_array()
    {
        Func<int> tour = HugeArrayTour;
        Assert.NotNull(tour);

        using var small = new HugeArray<int>(100_000);
        small[99_999] = 7;
        small.VectorFill(1);
        small.ParallelVectorMultiply(3);
        Assert.Equal(3, small.ParallelVectorMax());
    }

    [Fact]
    public void Lease_tour()
    {
        var prices = new FixedBuffer<double>(1000);
        prices.Fill(2);
        #region example: lease-basics
        using (MemoryLease<double> lease = prices.Lease())
        {
            Span<double> span = lease.Span;          // or lease.AsSpan(start, length), lease.GetChunks()
            ref double first = ref lease[0];
            first = 1.5;
            double sum = 0;
            foreach (double price in span) { sum += price; }
            nint forC = lease.Pointer;               // valid for a native call made inside the lease
        }                                            // the lease ends here
        #endregion

        Assert.Equal(1.5, prices[0]);
        Assert.Equal(2, prices[1]);
        prices.Free();
    }

    [Fact]
    public void Record_table_tour()
    {
        const long count = 10_000;
        static string NameOf(long row) => row % 2 == 0 ? $"Jo {row}" : $"Zoë {row}";
        static double ScoreOf(long row) => row % 100;

        #region example: record-table
        AllocationOptions options = HugePagePolicy.DefaultFor<Customer>(count); // huge pages if this host favours them
        using var names = new Utf8StringStore(16 << 20, options);
        using var rows = new HugeArray<Customer>(count, options);
        using var scores = new HugeArray<double>(count, options);         // a column of its own, for SIMD scans
        using var byId = new NativeHashIndex<long>(count, options);
        for (long row = 0; row < count; row++)
        {
            long id = 1000 + row;
            rows[row] = new Customer { Id = id, Name = names.Add(NameOf(row)), Category = (int)(row % 7) };
            scores[row] = ScoreOf(row);
            byId.Add(id, row);
        }

        if (byId.TryGetValue(1042, out long r))
        {
            Console.WriteLine(rows[r].Name);                              // decodes to a string only here
        }

        long[] ids = [1000, 1001, 7];                                     // many lookups under one lease:
        long[] found = new long[ids.Length];                              // found = [0, 1, -1] (-1: no such id)
        int present = byId.TryGetValues(ids, found);

        // Rows [0, 1000) with a score from 50 to 60 and a name starting with "Jo".
        int[] hits = new int[1000];
        int candidates = ColumnScan.FindInRange(scores, 0, 1000, 50, 60, hits);
        int matched = 0;
        using (MemoryLease<Customer> lease = rows.Lease())                // rows read as a span, no per-row check
        using (names.EnterRead())                                         // no Reset/Dispose meanwhile
        {
            ReadOnlySpan<Customer> window = lease.AsSpan(0, 1000);
            for (int i = 0; i < candidates; i++)
            {
                if (window[hits[i]].Name.StartsWith("Jo"u8)) { matched++; }
            }
        }

        Customer customer = rows[r];                                      // rename: the new text is appended,
        customer.Name = names.Replace(customer.Name, "Joanna");           // the old bytes wait for Reset()
        rows[r] = customer;                                               // (counted once in names.AbandonedBytes)
        #endregion

        Assert.Equal(42, r);
        Assert.Equal(2, present);
        Assert.Equal([0L, 1L, -1L], found);
        Assert.Equal(110, candidates);
        Assert.Equal(60, matched);
        Assert.Equal("Joanna", rows[r].Name.ToString());
        Assert.Equal("Jo 42".Length, names.AbandonedBytes);
    }

    [Fact]
    public void Arena_tour()
    {
        #region example: arena-basics
        using var arena = new JemArena(budgetBytes: 64 << 20);
        SafeArray<long> rows = arena.CreateArray<long>(1_000_000);   // counts against the budget
        FixedBuffer<byte> scratch = arena.CreateBuffer<byte>(4096);
        arena.Reset();                // frees both at once
        Assert.Throws<ObjectDisposedException>(() => rows[0]);       // the ledger knows the arena was reset
        #endregion

        Assert.False(scratch.IsValid);
        Assert.Equal(0, arena.UsedBytes);
    }

    [Fact]
    public unsafe void Jem_tour()
    {
        nint decayBefore = MallctlKeys.Arena(0).DirtyDecayMs.Get();
        try
        {
            #region example: jem-lowlevel
            unsafe
            {
                void* p = Jem.Mallocx(4096, MallocxFlags.Align(64) | MallocxFlags.Zero);
                nuint real = Jem.Sallocx(p, MallocxFlags.None);
                Jem.Dallocx(p, MallocxFlags.None);
            }

            string version = MallctlKeys.Version.Get();
            uint arenas = MallctlKeys.Arenas.Narenas.Get();
            MallctlKeys.Arena(0).DirtyDecayMs.Set(5_000);
            var allocatedMib = MallctlKeys.Stats.Allocated.ToMib();   // look a hot key up once

            JemStatistics stats = Jem.GetStatistics(exact: true);
            string json = Jem.GetStatsJson();
            #endregion

            Assert.StartsWith("5.3.0", version, StringComparison.Ordinal);
            Assert.True(arenas > 0);
            Assert.Equal((nint)5_000, MallctlKeys.Arena(0).DirtyDecayMs.Get());
            Assert.True(allocatedMib.Get() > 0);
            Assert.True(stats.Allocated > 0);
            Assert.StartsWith("{", json, StringComparison.Ordinal);
        }
        finally
        {
            MallctlKeys.Arena(0).DirtyDecayMs.Set(decayBefore);
        }
    }

    [Fact]
    public void Pool_tour()
    {
        #region example: pool-pipe
        using var pool = new JemMemoryPool(budgetBytes: 64 << 20);
        var pipe = new Pipe(new PipeOptions(pool: pool));
        // ... writer and reader tasks over pipe.Writer / pipe.Reader ...
        JemMemoryPoolStatistics stats = pool.GetStatistics();  // RentCount, ReturnCount, OutstandingBytes, CachedBytes
        #endregion

        Assert.Equal(0, stats.RentCount);
        pipe.Writer.Complete();
        pipe.Reader.Complete();
    }

    [Fact]
    public void Writer_tour()
    {
        #region example: writer-json
        using var output = new NativeBufferWriter<byte>();
        using (var json = new Utf8JsonWriter(output))
        {
            json.WriteStartObject();
            json.WriteString("name", "jemalloc");
            json.WriteEndObject();
        }
        ReadOnlySpan<byte> utf8 = output.WrittenSpan;   // {"name":"jemalloc"}
        #endregion

        Assert.Equal("{\"name\":\"jemalloc\"}", Encoding.UTF8.GetString(utf8));
    }

    [Fact]
    public async Task Detach_tour()
    {
        using var file = new MemoryStream();
        static void WriteDocument(IBufferWriter<byte> writer)
        {
            using var json = new Utf8JsonWriter(writer);
            json.WriteStartArray();
            json.WriteNumberValue(42);
            json.WriteEndArray();
        }

        #region example: writer-detach
        using var output = new NativeBufferWriter<byte>();
        WriteDocument(output);                                   // Utf8JsonWriter, a serializer, ...
        using HugeArray<byte> document = output.DetachToHugeArray();   // the same block, now an array's
        using var stream = new NativeMemoryStream(document, writable: false, leaveOpen: true);
        await stream.CopyToAsync(file);
        #endregion

        Assert.Equal("[42]", Encoding.UTF8.GetString(file.ToArray()));
        Assert.Equal(0, output.WrittenCount);
    }
}
