namespace jemalloc.Caching;

/// <summary>
/// The timer that sweeps a <see cref="NativeCache"/>'s expired segments when nothing else calls it.
/// It holds the cache weakly, so a cache that is dropped without <see cref="NativeCache.Dispose"/> is
/// still collected; the timer then stops itself.
/// </summary>
internal sealed class CacheSweepTimer : IDisposable
{
    private readonly WeakReference<NativeCache> _cache;
    private readonly ITimer _timer;

    internal CacheSweepTimer(NativeCache cache, TimeProvider time, TimeSpan interval)
    {
        _cache = new WeakReference<NativeCache>(cache);
        _timer = time.CreateTimer(static state => ((CacheSweepTimer)state!).Tick(), this, interval, interval);
    }

    /// <inheritdoc/>
    public void Dispose() => _timer.Dispose();

    private void Tick()
    {
        if (!_cache.TryGetTarget(out NativeCache? cache))
        {
            _timer.Dispose();
            return;
        }

        try
        {
            cache.SweepAll();
        }
        catch (ObjectDisposedException)
        {
            // Disposed while the tick ran: nothing is left to sweep.
        }
        catch (OutOfMemoryException)
        {
            // Moving a sliding entry forward found no memory: the entry was dropped instead, and the
            // next tick or call sweeps again. A timer's exception would end the process.
        }
    }
}
