namespace jemalloc;

/// <summary>
/// How <see cref="HugePagePolicy"/> decides whether arrays, writer blocks and pool blocks created
/// without options ask for transparent huge pages (<see cref="HugePagePolicy.Selection"/>).
/// </summary>
public enum HugePageSelection
{
    /// <summary>
    /// The default: the library measures, once per process, what first touching fresh memory costs on
    /// this host with and without huge pages, and asks for them only when they are not clearly dearer
    /// (<see cref="HugePagePolicy.Measure"/>).
    /// </summary>
    Measured = 0,

    /// <summary>Always ask for huge pages from <see cref="HugePagePolicy.ThresholdBytes"/> up, without measuring (the behaviour before measuring existed).</summary>
    Always,

    /// <summary>Never ask for huge pages by default: 4 KiB pages, unless the options or the arena ask for them.</summary>
    Never,
}
