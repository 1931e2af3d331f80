using jemalloc;

// Allocates native memory through the package's jemalloc, uses it, frees it, and checks the result.
const int Count = 1_000_000;

Console.WriteLine($"jemalloc {Jem.Version}, loaded as {Jem.Load()}");
long sum = SumOfNativeNumbers(Count);
long expected = (long)Count * (Count - 1) / 2;

JemStatistics stats = Jem.GetStatistics(exact: true);
Console.WriteLine($"sum {sum:N0}; jemalloc now has {stats.Allocated:N0} bytes allocated, {stats.Resident:N0} resident");
Console.WriteLine(sum == expected ? "OK" : $"FAILED: expected {expected:N0}");
return sum == expected ? 0 : 1;

static unsafe long SumOfNativeNumbers(int count)
{
    long* numbers = (long*)Jem.Mallocx((nuint)count * sizeof(long), MallocxFlags.Zero | MallocxFlags.Align(64));
    try
    {
        var span = new Span<long>(numbers, count);
        for (int i = 0; i < span.Length; i++)
        {
            span[i] = i;
        }

        long total = 0;
        foreach (long number in span)
        {
            total += number;
        }

        return total;
    }
    finally
    {
        Jem.Dallocx(numbers);
    }
}
