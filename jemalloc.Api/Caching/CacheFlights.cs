using jemalloc.Internal;

namespace jemalloc.Caching;

/// <summary>
/// The flights of a <see cref="NativeCache"/>'s <c>GetOrAdd</c> calls, by key: indexed by the key's hash,
/// matched by its bytes, so two keys with one hash never share a flight (nor a value).
/// </summary>
internal sealed class CacheFlights
{
    private readonly Dictionary<ulong, CacheFlight> _byHash = [];
    private readonly Lock _gate = new();

    /// <summary>The number of flights in the air (for tests).</summary>
    internal int Count
    {
        get
        {
            lock (_gate)
            {
                int count = 0;
                foreach (CacheFlight head in _byHash.Values)
                {
                    for (CacheFlight? flight = head; flight is not null; flight = flight.Next)
                    {
                        count++;
                    }
                }

                return count;
            }
        }
    }

    /// <summary>How many callers joined the flight of <paramref name="key"/> after its first (for tests); -1 if there is none.</summary>
    internal int WaitersFor(ReadOnlySpan<byte> key, ulong hash)
    {
        lock (_gate)
        {
            _ = _byHash.TryGetValue(hash, out CacheFlight? flight);
            for (; flight is not null; flight = flight.Next)
            {
                if (key.SequenceEqual(flight.Key))
                {
                    return flight.Waiters;
                }
            }

            return -1;
        }
    }

    /// <summary>Joins the flight of <paramref name="key"/>, or starts one (<paramref name="first"/>: the caller runs the factory).</summary>
    /// <param name="key">The key.</param>
    /// <param name="hash">Its hash.</param>
    /// <param name="asynchronous">Whether the caller is GetOrAddAsync (its flight is owned by its async flow, not its thread).</param>
    /// <param name="owned">The asynchronous flights whose factories run in the caller's async flow, innermost first.</param>
    /// <param name="first">Whether the caller started the flight.</param>
    /// <exception cref="InvalidOperationException">The caller runs the factory of the flight it would join: it would wait for itself.</exception>
    internal CacheFlight Join(ReadOnlySpan<byte> key, ulong hash, bool asynchronous, CacheFlight? owned, out bool first)
    {
        lock (_gate)
        {
            _ = _byHash.TryGetValue(hash, out CacheFlight? head);
            for (CacheFlight? flight = head; flight is not null; flight = flight.Next)
            {
                if (key.SequenceEqual(flight.Key))
                {
                    if (flight.IsOwnedBy(Environment.CurrentManagedThreadId, owned))
                    {
                        ThrowHelper.ThrowInvalidOperation("GetOrAdd was re-entered for the same key from its own factory; the factory would wait for itself.");
                    }

                    flight.Waiters++;
                    first = false;
                    return flight;
                }
            }

            var started = new CacheFlight(hash, key.ToArray(), asynchronous ? 0 : Environment.CurrentManagedThreadId, asynchronous ? owned : null) { Next = head };
            _byHash[hash] = started;
            first = true;
            return started;
        }
    }

    /// <summary>Takes <paramref name="flight"/> out of the table: no one joins it afterwards.</summary>
    /// <returns>How many callers joined it.</returns>
    internal int Leave(CacheFlight flight)
    {
        lock (_gate)
        {
            if (_byHash.TryGetValue(flight.Hash, out CacheFlight? head))
            {
                if (head == flight)
                {
                    if (flight.Next is null)
                    {
                        _ = _byHash.Remove(flight.Hash);
                    }
                    else
                    {
                        _byHash[flight.Hash] = flight.Next;
                    }
                }
                else
                {
                    for (CacheFlight previous = head; previous.Next is not null; previous = previous.Next)
                    {
                        if (previous.Next == flight)
                        {
                            previous.Next = flight.Next;
                            break;
                        }
                    }
                }
            }

            flight.Next = null;
            return flight.Waiters;
        }
    }
}
