using System.Buffers;
using System.Diagnostics.CodeAnalysis;
using System.IO.Hashing;
using jemalloc.Caching;
using jemalloc.Internal;

namespace jemalloc;

// GetOrAdd and GetOrAddAsync: a miss runs one factory per key, whoever else asks meanwhile waits
// for it (the flights table, keyed by the key's hash; a different key with the same 64-bit hash
// only waits and tries again).
public sealed partial class NativeCache
{
    private readonly Dictionary<ulong, CacheFlight> _flights = [];
    private readonly Lock _flightGate = new();
    // The asynchronous flights whose factories run in this async flow (innermost first, via Outer):
    // a factory awaiting a flight it owns would wait for itself.
    private readonly AsyncLocal<CacheFlight?> _ownedFlight = new();

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

            CacheFlight flight = JoinFlight(key, asynchronous: false, out bool first);
            if (!first)
            {
                // Rethrows the factory's exception; false or true, the next pass reads or tries again.
                _ = flight.Done.Task.GetAwaiter().GetResult();
                continue;
            }

            try
            {
                using CachePooledWriter writer = new();
                factory(key, state, writer);
                SetCore(key, default, writer.WrittenSpan, fromSequence: false, options, lease: true, out lease);
            }
            catch (Exception e)
            {
                EndFlight(flight, e);
                throw;
            }

            EndFlight(flight, stored: true);
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
            CacheFlight flight = JoinFlight(key.Span, asynchronous: true, out bool first);
            if (!first)
            {
                _ = await flight.Done.Task.WaitAsync(cancellationToken).ConfigureAwait(false);
                if (TryRead(key.Span, state, reader, out TResult? waited))
                {
                    return waited;
                }

                continue;
            }

            CachePooledWriter writer = new();
            try
            {
                // Another caller may have stored it between the miss and the flight.
                if (TryRead(key.Span, state, reader, out TResult? raced))
                {
                    EndFlight(flight, stored: true);
                    return raced;
                }

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
        EndFlight(flight, stored: true);
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

    private CacheFlight JoinFlight(ReadOnlySpan<byte> key, bool asynchronous, out bool first)
    {
        ulong hash = XxHash3.HashToUInt64(key);
        CacheFlight? owned = _ownedFlight.Value;
        lock (_flightGate)
        {
            ThrowIfDisposed();
            if (_flights.TryGetValue(hash, out CacheFlight? flight))
            {
                if (OwnsFlight(flight, owned))
                {
                    ThrowHelper.ThrowInvalidOperation("GetOrAdd was re-entered for the same key from its own factory; the factory would wait for itself.");
                }

                first = false;
                return flight;
            }

            flight = new CacheFlight(hash, asynchronous ? 0 : Environment.CurrentManagedThreadId, asynchronous ? owned : null);
            _flights.Add(hash, flight);
            first = true;
            return flight;
        }
    }

    // Whether this caller runs the flight's factory: on this thread (synchronous) or up this async flow.
    private static bool OwnsFlight(CacheFlight flight, CacheFlight? owned)
    {
        if (flight.OwnerThread == Environment.CurrentManagedThreadId)
        {
            return true;
        }

        for (; owned != null; owned = owned.Outer)
        {
            if (owned == flight)
            {
                return true;
            }
        }

        return false;
    }

    private void EndFlight(CacheFlight flight, bool stored)
    {
        Leave(flight);
        _ = flight.Done.TrySetResult(stored);
    }

    private void EndFlight(CacheFlight flight, Exception exception)
    {
        Leave(flight);
        if (flight.Done.TrySetException(exception))
        {
            // Observed here, so a flight no one waited for does not raise UnobservedTaskException.
            _ = flight.Done.Task.Exception;
        }
    }

    private void Leave(CacheFlight flight)
    {
        lock (_flightGate)
        {
            if (_flights.TryGetValue(flight.Hash, out CacheFlight? current) && current == flight)
            {
                _ = _flights.Remove(flight.Hash);
            }
        }
    }
}
