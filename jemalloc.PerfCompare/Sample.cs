namespace jemalloc.PerfCompare;

/// <summary>One run of a measurement in a worker, as the worker reports it.</summary>
/// <param name="Wall">ns per operation on the wall clock.</param>
/// <param name="Cpu">ns per operation in the worker thread's CPU time; -1 where there is no such clock.</param>
/// <param name="CompiledMethods">The methods the worker's JIT had compiled by the end of the run: while it still grows, tiered compilation is still at work.</param>
internal readonly record struct Sample(double Wall, double Cpu, long CompiledMethods)
{
    /// <summary>The time per operation on the CPU clock if <paramref name="cpu"/> and the worker has one, else on the wall clock.</summary>
    internal double Time(bool cpu) => cpu && Cpu > 0 ? Cpu : Wall;
}
