using System.Buffers;
using System.Diagnostics.CodeAnalysis;
using System.IO.Hashing;
using jemalloc.Caching;

namespace jemalloc;

// GetOrAdd and GetOrAddAsync: a miss runs one factory per key, whoever else asks meanwhile waits
// for it (the flights table, matched by the key's bytes), and gets the bytes the factory produced
// if the value left the cache before it could read it.
public sealed partial class NativeCache
{
    private readonly CacheFlights _flights = new();

    // The asynchronous flights whose factories run in this async flow (innermost first, via Outer):
    // a factory awaiting a flight it owns would wait for itself.
    private readonly AsyncLocal<CacheFlight?> _ownedFlight = new();

    /// <summary>The flights of GetOrAdd calls in the air (for tests).</summary>
    internal CacheFlights Flights => _flights;

    private NativeCacheLease GetOrAddCore<TState>(scoped ReadOnlySpan<byte> key, TState state, NativeCacheValueFactory<TState> factory, scoped in NativeCacheEntryOptions options)
    {
        ArgumentNullException.ThrowIfNull(factory);
        CheckKey(key);
        CheckExpiry(options);
        while (true)
        {
            if (TryGetCore(key, out NativeCacheLease lease))
            {
                return lease;
            }

            if (!EnterFlightOrRead(key, asynchronous: false, out CacheFlight? flight, out bool first, out lease))
            {
                return lease;
            }

            if (!first)
            {
                // Rethrows the factory's exception; false: the first caller gave up, and this one tries again.
                if (flight.Done.Task.GetAwaiter().GetResult() && flight.Value is { } produced)
                {
                    if (TryGetCore(key, out lease))
                    {
                        return lease;
                    }

                    // Evicted, removed or expired before this caller could read it: the flight's bytes
                    // go back in, rather than a second factory call.
                    SetCore(key, default, produced, fromSequence: false, options, lease: true, out lease);
                    return lease;
                }

                continue;
            }

            try
            {
                using CachePooledWriter writer = new();
                factory(key, state, writer);
                SetCore(key, default, writer.WrittenSpan, fromSequence: false, options, lease: true, out lease);
                EndFlight(flight, writer.WrittenSpan);
            }
            catch (Exception e)
            {
                EndFlight(flight, e);
                throw;
            }

            return lease;
        }
    }

    private ValueTask<TResult> GetOrAddAsyncCore<TState, TResult>(
        ReadOnlyMemory<byte> key, TState state, Func<TState, IBufferWriter<byte>, CancellationToken, ValueTask> factory,
        NativeCacheValueReader<TState, TResult> reader, NativeCacheEntryOptions options, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(factory);
        ArgumentNullException.ThrowIfNull(reader);
        CheckKey(key.Span);
        CheckExpiry(options);
        if (TryRead(key.Span, state, reader, out TResult? result))
        {
            return new ValueTask<TResult>(result);
        }

        return GetOrAddSlowAsync(key, state, factory, reader, options, cancellationToken);
    }

    private async ValueTask<TResult> GetOrAddSlowAsync<TState, TResult>(
        ReadOnlyMemory<byte> key, TState state, Func<TState, IBufferWriter<byte>, CancellationToken, ValueTask> factory,
        NativeCacheValueReader<TState, TResult> reader, NativeCacheEntryOptions options, CancellationToken cancellationToken)
    {
        while (true)
        {
            cancellationToken.ThrowIfCancellationRequested();
            if (!EnterFlightOrRead(key.Span, state, reader, out CacheFlight? flight, out bool first, out TResult? stored))
            {
                return stored;
            }

            if (!first)
            {
                bool produced = await flight.Done.Task.WaitAsync(cancellationToken).ConfigureAwait(false);
                if (TryRead(key.Span, state, reader, out TResult? waited))
                {
                    return waited;
                }

                if (produced && flight.Value is { } bytes)
                {
                    // Gone before this caller could read it: the bytes the factory produced, not a second call.
                    return reader(bytes, state);
                }

                continue;
            }

            CachePooledWriter writer = new();
            try
            {
                // An async method's AsyncLocal changes end with it: the caller's flow never sees this one.
                _ownedFlight.Value = flight;
                await factory(state, writer, cancellationToken).ConfigureAwait(false);
                return StoreAndRead(flight, key.Span, writer, state, reader, options);
            }
            catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
            {
                // This caller gave up: the waiters try again rather than fail with its cancellation.
                EndFlight(flight, stored: false);
                throw;
            }
            catch (Exception e)
            {
                EndFlight(flight, e);
                throw;
            }
            finally
            {
                writer.Dispose();
            }
        }
    }

    private TResult StoreAndRead<TState, TResult>(CacheFlight flight, ReadOnlySpan<byte> key, CachePooledWriter writer, TState state, NativeCacheValueReader<TState, TResult> reader, in NativeCacheEntryOptions options)
    {
        SetCore(key, default, writer.WrittenSpan, fromSequence: false, options, lease: true, out NativeCacheLease lease);
        EndFlight(flight, writer.WrittenSpan);
        using (lease)
        {
            return reader(lease.Span, state);
        }
    }

    private bool TryRead<TState, TResult>(ReadOnlySpan<byte> key, TState state, NativeCacheValueReader<TState, TResult> reader, [MaybeNullWhen(false)] out TResult result)
    {
        if (!TryGetCore(key, out NativeCacheLease lease))
        {
            result = default;
            return false;
        }

        using (lease)
        {
            result = reader(lease.Span, state);
            return true;
        }
    }

    // The options' expiry checked before a factory runs, so a bad one costs no factory call.
    private void CheckExpiry(in NativeCacheEntryOptions options)
    {
        if (options.AbsoluteExpiration.HasValue || options.AbsoluteExpirationRelativeToNow.HasValue || options.SlidingExpiration.HasValue)
        {
            DateTimeOffset now = _time.GetUtcNow();
            _ = CacheExpiry.From(options, now.ToUnixTimeMilliseconds(), now);
        }
    }

    /// <summary>Runs between a GetOrAdd's miss and its joining a flight (for tests: a flight can end in that window).</summary>
    internal Action? BetweenMissAndFlight { get; set; }

    // Joins the key's flight or starts one. A caller that starts one reads again first: a flight that
    // ended between this caller's miss and now has stored the value, and a new flight would run the
    // factory a second time. False, with a lease on the value, when it is there.
    private bool EnterFlightOrRead(scoped ReadOnlySpan<byte> key, bool asynchronous, [NotNullWhen(true)] out CacheFlight? flight, out bool first, out NativeCacheLease lease)
    {
        BetweenMissAndFlight?.Invoke();
        flight = JoinFlight(key, asynchronous, out first);
        if (first && TryGetCore(key, out lease))
        {
            // No value produced: a waiter that joined meanwhile reads the stored one.
            EndFlight(flight, stored: false);
            flight = null;
            return false;
        }

        lease = default;
        return true;
    }

    // EnterFlightOrRead for GetOrAddAsync, which cannot hold a lease across its awaits: the value read instead.
    private bool EnterFlightOrRead<TState, TResult>(ReadOnlySpan<byte> key, TState state, NativeCacheValueReader<TState, TResult> reader, [NotNullWhen(true)] out CacheFlight? flight, out bool first, [MaybeNullWhen(true)] out TResult result)
    {
        if (EnterFlightOrRead(key, asynchronous: true, out flight, out first, out NativeCacheLease lease))
        {
            result = default;
            return true;
        }

        using (lease)
        {
            result = reader(lease.Span, state);
            return false;
        }
    }

    private CacheFlight JoinFlight(ReadOnlySpan<byte> key, bool asynchronous, out bool first)
    {
        ThrowIfDisposed();
        return _flights.Join(key, XxHash3.HashToUInt64(key), asynchronous, _ownedFlight.Value, out first);
    }

    // The value stored: copied for the waiters, if any joined (none can join once the flight has left the table).
    private void EndFlight(CacheFlight flight, ReadOnlySpan<byte> value)
    {
        if (_flights.Leave(flight) > 0)
        {
            flight.Value = value.ToArray();
        }

        _ = flight.Done.TrySetResult(true);
    }

    private void EndFlight(CacheFlight flight, bool stored)
    {
        _ = _flights.Leave(flight);
        _ = flight.Done.TrySetResult(stored);
    }

    private void EndFlight(CacheFlight flight, Exception exception)
    {
        _ = _flights.Leave(flight);
        if (flight.Done.TrySetException(exception))
        {
            // Observed here, so a flight no one waited for does not raise UnobservedTaskException.
            _ = flight.Done.Task.Exception;
        }
    }
}
