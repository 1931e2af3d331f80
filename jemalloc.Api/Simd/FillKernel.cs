namespace jemalloc.Simd;

/// <summary>Which stores write a big block: <see cref="FillPolicy"/>'s answer for one write.</summary>
internal enum FillKernel
{
    /// <summary>Ordinary vector stores (<see cref="Span{T}.Fill"/>, <see cref="Span{T}.CopyTo"/>).</summary>
    Ordinary,

    /// <summary>Non-temporal (streaming) stores.</summary>
    NonTemporal,

    /// <summary>Not yet decided: a fill may be one that measures the kernels (see <see cref="FillMeasurement"/>).</summary>
    Undecided,
}
