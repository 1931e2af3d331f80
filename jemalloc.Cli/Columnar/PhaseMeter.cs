using System.Diagnostics;

namespace jemalloc.Cli.Columnar;

/// <summary>
/// Measures the timed phases of one side of a workload: wall time lap by lap, and over the time it
/// runs (not while paused) the whole process's counters (<see cref="ProcessUsage"/>) and collections
/// per generation; optionally the garbage collector's pauses too (<see cref="GcPauseListener"/>).
/// </summary>
public class PhaseMeter : IDisposable
{
    // How long Stop waits for the events of the collections it counted.
    private static readonly TimeSpan PauseEventWait = TimeSpan.FromSeconds(10);

    private readonly Stopwatch _clock = new();
    private readonly GcPauseListener? _pauses;
    private readonly TimeSpan _pauseTotalStart;
    private readonly int _collectionsStart;
    private readonly int _gcCountStart;
    private ProcessUsage _usage;
    private ProcessUsage _since;
    private int _gen0;
    private int _gen1;
    private int _gen2;
    private int _gen0Since;
    private int _gen1Since;
    private int _gen2Since;
    private TimeSpan _lapStart;

    /// <summary>Starts the clock and the counters.</summary>
    /// <param name="trackGcPauses">
    /// Whether to record each GC pause (longest and total): the pauses are those from this call to
    /// <see cref="Stop"/>, paused stretches included, so a side that tracks them does not pause.
    /// </param>
    protected PhaseMeter(bool trackGcPauses)
    {
        if (trackGcPauses)
        {
            _pauses = new GcPauseListener();
            _collectionsStart = _pauses.Collections;
            _gcCountStart = GC.CollectionCount(0);
            _pauseTotalStart = GC.GetTotalPauseDuration();
        }

        Resume();
        _lapStart = _clock.Elapsed;
    }

    /// <summary>Starts a meter now.</summary>
    /// <param name="trackGcPauses">Whether to record each GC pause (see <see cref="PhaseMeter(bool)"/>).</param>
    public static PhaseMeter Start(bool trackGcPauses) => new(trackGcPauses);

    /// <summary>Wall time since the start, not counting paused stretches.</summary>
    public TimeSpan Elapsed => _clock.Elapsed;

    /// <summary>Ends the current lap and starts the next.</summary>
    /// <returns>The lap's seconds.</returns>
    public double Lap()
    {
        TimeSpan now = _clock.Elapsed;
        double seconds = (now - _lapStart).TotalSeconds;
        _lapStart = now;
        return seconds;
    }

    /// <summary>Ends the current lap and stops the clock and the counters until <see cref="Resume"/>.</summary>
    /// <returns>The lap's seconds.</returns>
    public double Pause()
    {
        double seconds = Lap();
        ProcessUsage now = ProcessUsage.Now();
        _usage = Add(_usage, now.Since(_since));
        _gen0 += GC.CollectionCount(0) - _gen0Since;
        _gen1 += GC.CollectionCount(1) - _gen1Since;
        _gen2 += GC.CollectionCount(2) - _gen2Since;
        _clock.Stop();
        return seconds;
    }

    /// <summary>Starts the clock and the counters again after <see cref="Pause"/>.</summary>
    public void Resume()
    {
        _gen0Since = GC.CollectionCount(0);
        _gen1Since = GC.CollectionCount(1);
        _gen2Since = GC.CollectionCount(2);
        _since = ProcessUsage.Now();
        _clock.Start();
    }

    /// <summary>Stops the meter (as <see cref="Pause"/>) and returns what it counted.</summary>
    public PhaseTotals Stop()
    {
        _ = Pause();
        double longest = -1, total = -1;
        if (_pauses is not null)
        {
            total = (GC.GetTotalPauseDuration() - _pauseTotalStart).TotalMilliseconds;

            // Every collection counted has its events delivered before the longest pause is read;
            // should they not come (an event pipe that dropped them), the longest is unknown (-1).
            int collections = GC.CollectionCount(0) - _gcCountStart;
            longest = _pauses.WaitForCollections(_collectionsStart + collections, PauseEventWait) ? _pauses.LongestPauseMs : -1;
        }

        return new PhaseTotals(_usage, _gen0, _gen1, _gen2, total, longest);
    }

    /// <summary>Stops listening for GC pauses, if it did.</summary>
    public void Dispose()
    {
        Dispose(disposing: true);
        GC.SuppressFinalize(this);
    }

    /// <summary>Stops listening for GC pauses, if it did.</summary>
    /// <param name="disposing">Whether this is <see cref="Dispose()"/> rather than a finalizer.</param>
    protected virtual void Dispose(bool disposing)
    {
        if (disposing)
        {
            _pauses?.Dispose();
        }
    }

    private static ProcessUsage Add(ProcessUsage a, ProcessUsage b) => new(
        a.UserSeconds + b.UserSeconds,
        a.SystemSeconds + b.SystemSeconds,
        Sum(a.MinorFaults, b.MinorFaults),
        Sum(a.MajorFaults, b.MajorFaults),
        Sum(a.VoluntarySwitches, b.VoluntarySwitches),
        Sum(a.InvoluntarySwitches, b.InvoluntarySwitches));

    private static long Sum(long a, long b) => a < 0 || b < 0 ? -1 : a + b;
}
