using System.Diagnostics.Tracing;

namespace jemalloc.Cli.Columnar;

/// <summary>
/// Records every pause of the garbage collector in this process from the runtime's own GC events
/// (the span from <c>GCSuspendEEBegin</c>, when the runtime starts stopping the threads, to
/// <c>GCRestartEEEnd</c>, when they run again), so the longest single pause of a phase is known,
/// not only the total that <see cref="GC.GetTotalPauseDuration"/> gives. A background collection
/// stops the threads more than once; each stop is a pause of its own.
/// </summary>
/// <remarks>
/// The runtime emits these events only around a collection, so listening costs nothing while none
/// happens. They reach the listener on a thread of the runtime's, a little after the fact:
/// <see cref="WaitForCollections"/> waits for the events of the collections counted so far.
/// </remarks>
public sealed class GcPauseListener : EventListener
{
    private const string RuntimeSource = "Microsoft-Windows-DotNETRuntime";
    private const EventKeywords GcKeyword = (EventKeywords)0x1;
    private const int GcEndEvent = 2;
    private const int RestartEndEvent = 3;
    private const int SuspendBeginEvent = 9;

    // The suspension reasons of a collection (SUSPEND_FOR_GC, SUSPEND_FOR_GC_PREP); the runtime also
    // stops the threads for a debugger or a shutdown, which are no GC pause.
    private const uint SuspendForGc = 1;
    private const uint SuspendForGcPrep = 6;

    private readonly Lock _lock = new();
    private DateTime _suspendedAt;
    private double _longestMs;
    private double _totalMs;
    private int _collections;

    /// <summary>The longest pause seen so far, in milliseconds.</summary>
    public double LongestPauseMs
    {
        get
        {
            lock (_lock)
            {
                return _longestMs;
            }
        }
    }

    /// <summary>The pauses seen so far, added up, in milliseconds.</summary>
    public double TotalPauseMs
    {
        get
        {
            lock (_lock)
            {
                return _totalMs;
            }
        }
    }

    /// <summary>The collections whose end the listener has seen.</summary>
    public int Collections
    {
        get
        {
            lock (_lock)
            {
                return _collections;
            }
        }
    }

    /// <summary>
    /// Waits until the listener has seen the end of <paramref name="collections"/> collections, or
    /// <paramref name="timeout"/> has passed.
    /// </summary>
    /// <returns>Whether it saw them all.</returns>
    public bool WaitForCollections(int collections, TimeSpan timeout)
    {
        DateTime until = DateTime.UtcNow + timeout;
        while (Collections < collections)
        {
            if (DateTime.UtcNow >= until)
            {
                return false;
            }

            Thread.Sleep(10);
        }

        return true;
    }

    /// <inheritdoc/>
    protected override void OnEventSourceCreated(EventSource eventSource)
    {
        ArgumentNullException.ThrowIfNull(eventSource);
        if (eventSource.Name == RuntimeSource)
        {
            EnableEvents(eventSource, EventLevel.Informational, GcKeyword);
        }
    }

    /// <inheritdoc/>
    protected override void OnEventWritten(EventWrittenEventArgs eventData)
    {
        ArgumentNullException.ThrowIfNull(eventData);
        lock (_lock)
        {
            switch (eventData.EventId)
            {
                case SuspendBeginEvent when IsForCollection(eventData):
                    _suspendedAt = eventData.TimeStamp;
                    break;
                case RestartEndEvent when _suspendedAt != default:
                    double ms = (eventData.TimeStamp - _suspendedAt).TotalMilliseconds;
                    _longestMs = Math.Max(_longestMs, ms);
                    _totalMs += ms;
                    _suspendedAt = default;
                    break;
                case GcEndEvent:
                    _collections++;
                    break;
            }
        }
    }

    private static bool IsForCollection(EventWrittenEventArgs eventData)
    {
        int index = eventData.PayloadNames?.IndexOf("Reason") ?? -1;
        return index < 0 || eventData.Payload?[index] is not uint reason || reason is SuspendForGc or SuspendForGcPrep;
    }
}
