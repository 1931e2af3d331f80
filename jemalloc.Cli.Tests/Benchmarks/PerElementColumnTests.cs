using BenchmarkDotNet.Running;
using jemalloc.Benchmarks.Infrastructure;
using jemalloc.Benchmarks.Suites;
using jemalloc.Benchmarks.Suites.Structures;
using jemalloc.Cli.Tests.Verbs;

namespace jemalloc.Cli.Tests.Benchmarks;

/// <summary>The per-element columns divide each row by the elements it really processes.</summary>
[Collection(JembenchRuns.Name)]
public class PerElementColumnTests
{
    private static BenchmarkCase Row(Type suite, string method) =>
        BenchmarkConverter.TypeToBenchmarks(suite, JemBenchConfig.Create(new RunSettings { Quick = true }, [], JemBenchConfig.InProcessJob(new RunSettings { Quick = true })))
            .BenchmarksCases.Single(c => c.Descriptor.WorkloadMethod.Name == method);

    [Fact]
    public void A_hugearray_managed_row_processes_the_largest_managed_array_and_a_native_row_every_element()
    {
        long count = Array.MaxLength + 1000L;
        SuiteParameters.Sizes = [count];
        Assert.Equal(Array.MaxLength, PerElementColumn.ElementsOf(Row(typeof(HugeArrayBenchmarks<byte>), nameof(HugeArrayBenchmarks<byte>.FillManaged))));
        Assert.Equal(Array.MaxLength, PerElementColumn.ElementsOf(Row(typeof(HugeArrayMathBenchmarks<int>), nameof(HugeArrayMathBenchmarks<int>.ParallelMultiplyManaged))));
        Assert.Equal(count, PerElementColumn.ElementsOf(Row(typeof(HugeArrayBenchmarks<byte>), nameof(HugeArrayBenchmarks<byte>.FillNative))));
        Assert.Equal(count, PerElementColumn.ElementsOf(Row(typeof(HugeArrayBenchmarks<byte>), nameof(HugeArrayBenchmarks<byte>.FillMachineLimit))));
    }

    [Fact]
    public void Rows_that_are_not_element_rows_have_no_per_element_figure()
    {
        SuiteParameters.Sizes = [2];
        Assert.Null(PerElementColumn.ElementsOf(Row(typeof(MallocBenchmarks<byte>), nameof(MallocBenchmarks<byte>.JemFragmentation))));
    }
}
