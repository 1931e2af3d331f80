using jemalloc.Tests.Support;

namespace jemalloc.Tests.Native;

public unsafe class SizeQueryThreadTests
{
    [Fact]
    public void Size_queries_work_on_a_thread_that_never_called_jemalloc_before()
    {
        void* memory = Jem.Mallocx(1000);
        nuint expected = Jem.Nallocx(1000);
        var results = new List<(bool ReadyBefore, nuint First, nuint Sallocx, nuint Usable, nuint Nallocx, bool ReadyAfter)>();
        Workers.Run(3, kind =>
        {
            // Each thread starts with a different query, which must set up jemalloc's thread state with the GC transition.
            bool before = jemalloc.Interop.JemNative.SizeQueriesReady;
            nuint first = kind switch
            {
                0 => Jem.Sallocx(memory),
                1 => Jem.MallocUsableSize(memory),
                _ => Jem.Nallocx(1000),
            };
            var row = (before, first, Jem.Sallocx(memory), Jem.MallocUsableSize(memory), Jem.Nallocx(1000), jemalloc.Interop.JemNative.SizeQueriesReady);
            lock (results)
            {
                results.Add(row);
            }
        });
        Jem.Dallocx(memory);

        Assert.Equal(3, results.Count);
        Assert.All(results, row => Assert.Equal((false, expected, expected, expected, expected, true), row));
    }
}
