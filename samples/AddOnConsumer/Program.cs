using System.Runtime.InteropServices;
using Apache.Arrow;
using jemalloc;
using jemalloc.Arrow;
using jemalloc.Caching;
using jemalloc.Parquet;
using Microsoft.Extensions.Caching.Distributed;
using Microsoft.Extensions.DependencyInjection;

// Writes a native column to Parquet, reads it back into native memory, sums it with SIMD, and views
// it as an Arrow array without a copy: the natives of jemalloc.NET and of ParquetSharp both load.
// Then a distributed cache in native memory, registered and freed by the container.
const long Rows = 1_000_000;
string path = Path.Combine(Path.GetTempPath(), $"addon-consumer-{Environment.ProcessId}.parquet");
try
{
    using (var written = new HugeArray<double>(Rows))
    {
        for (long i = 0; i < Rows; i++)
        {
            written[i] = i * 0.5;
        }

        new NativeParquetWriter { Compression = ParquetSharp.Compression.Zstd }.Add("x", written).Write(path);
    }

    using var reader = new NativeParquetReader(path);
    using HugeArray<double> column = reader.ReadColumn<double>("x");
    double sum = column.VectorSum();
    double expected = 0.5 * (Rows * (Rows - 1) / 2);

    using NativeArrowColumn arrow = column.ToArrow();
    bool zeroCopy = arrow.GetValueAddress(0) == column.Pointer && ((DoubleArray)arrow.Array).GetValue((int)(Rows - 1)) == (Rows - 1) * 0.5;

    bool cached;
    using (ServiceProvider services = new ServiceCollection().AddNativeDistributedCache(o => o.BudgetBytes = 8L << 20).BuildServiceProvider())
    {
        var cache = services.GetRequiredService<IDistributedCache>();
        cache.Set("sum", BitConverter.GetBytes(sum), new DistributedCacheEntryOptions { SlidingExpiration = TimeSpan.FromMinutes(1) });
        cached = cache is NativeDistributedCache && cache.Get("sum") is { } bytes && BitConverter.ToDouble(bytes) == sum;
    }

    Console.WriteLine($"jemalloc {Jem.Version} as {RuntimeInformation.RuntimeIdentifier}; Parquet sum {sum:N1} (expected {expected:N1}); Arrow view zero-copy: {zeroCopy}; native distributed cache: {cached}");
    bool ok = sum == expected && zeroCopy && cached;
    Console.WriteLine(ok ? "OK" : "FAILED");
    return ok ? 0 : 1;
}
finally
{
    File.Delete(path);
}
