namespace jemalloc.Simd;

/// <summary>
/// The automatic fill policy's evidence: whole fills written alternately by the ordinary and the
/// streaming kernel (<see cref="TakeTurn"/>), timed, and the decision they support. Only the best
/// (fastest) fill of each kernel counts, since interference (other threads, page faults,
/// preemption) only ever makes a fill slower; and streaming is chosen only when its best beats the
/// ordinary best by <see cref="Margin"/>, so two kernels within noise of each other keep the
/// ordinary stores.
/// </summary>
/// <remarks>Not thread-safe: <see cref="FillPolicy"/> lets one thread at a time add to it.</remarks>
internal sealed class FillMeasurement
{
    /// <summary>Fills each kernel must have been timed on before the choice is made.</summary>
    internal const int SamplesNeeded = 12;

    /// <summary>How much faster (best against best) streaming must be to be chosen: 10%.</summary>
    internal const double Margin = 0.10;

    private double _bestOrdinary;
    private double _bestNonTemporal;
    private int _ordinarySamples;
    private int _nonTemporalSamples;
    private int _turns;

    /// <summary>Fills timed so far, per kernel (the fewer of the two).</summary>
    internal int Samples => Math.Min(_ordinarySamples, _nonTemporalSamples);

    /// <summary>
    /// Which kernel the next measuring fill writes with: true for streaming. Pairs of turns alternate
    /// which kernel goes first (ordinary, streaming; streaming, ordinary; ...), so neither kernel
    /// always follows the other.
    /// </summary>
    internal bool TakeTurn()
    {
        int turn = _turns++;
        return ((turn ^ (turn / 2)) & 1) != 0;
    }

    /// <summary>Records one fill: <paramref name="bytes"/> written by one kernel in <paramref name="seconds"/>.</summary>
    /// <remarks>A fill too short for the clock to time (zero or negative) tells nothing and is dropped.</remarks>
    internal void Add(bool nonTemporal, long bytes, double seconds)
    {
        if (bytes <= 0 || !(seconds > 0))
        {
            return;
        }

        double speed = bytes / seconds;
        if (nonTemporal)
        {
            _bestNonTemporal = Math.Max(_bestNonTemporal, speed);
            _nonTemporalSamples++;
        }
        else
        {
            _bestOrdinary = Math.Max(_bestOrdinary, speed);
            _ordinarySamples++;
        }
    }

    /// <summary>
    /// The choice, once each kernel has <see cref="SamplesNeeded"/> fills (or, with
    /// <paramref name="force"/>, from whatever there is: ordinary stores unless streaming was clearly
    /// faster); false before. The choice's band is all sizes: <see cref="FillPolicy"/> sets its own.
    /// </summary>
    internal bool TryDecide(bool force, out FillChoice choice)
    {
        if (Samples < SamplesNeeded && !force)
        {
            choice = default;
            return false;
        }

        bool streams = Samples > 0 && _bestNonTemporal > _bestOrdinary * (1 + Margin);
        choice = new FillChoice(0, long.MaxValue, streams, _bestOrdinary, _bestNonTemporal, Samples);
        return true;
    }
}
