namespace jemalloc.Cli.Caching;

/// <summary>
/// The keys of one shape of <c>jembench cache</c>, with each key's value length and the latest version written
/// for it. Made the same in every process from the key count alone. The table is an array of numbers, which the
/// collector never walks, so it costs every side the same and none of its pause.
/// </summary>
public sealed class CacheKeySpace
{
    // A key's value length and latest version side by side: a check reads both, and one random read of
    // the table costs every side less of its time than two would.
    private readonly KeyState[] _states;
    private string[]? _strings;
    private byte[]? _utf8;
    private int[]? _offsets;

    /// <summary>Makes the key space.</summary>
    /// <param name="keys">The keys, 0 to <paramref name="keys"/> - 1.</param>
    /// <param name="workingKeys">The keys the workloads draw from (the first ones); the mean entry is theirs. The others are the scan's.</param>
    /// <param name="smallValues">BitFaster's shapes (24 to 64 bytes) rather than the server's log-normal lengths.</param>
    /// <exception cref="ArgumentOutOfRangeException">A count is out of range.</exception>
    public CacheKeySpace(int keys, int workingKeys, bool smallValues)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(keys, 1);
        ArgumentOutOfRangeException.ThrowIfLessThan(workingKeys, 1);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(workingKeys, keys);
        Count = keys;
        WorkingKeys = workingKeys;
        _states = new KeyState[keys];
        long total = 0;
        for (int i = 0; i < keys; i++)
        {
            int length = smallValues ? CacheData.SmallValueLength(i) : CacheData.ServerValueLength(i);
            _states[i].ValueLength = length;
            if (i < workingKeys)
            {
                total += length + CacheData.KeyLength(i);
            }
        }

        MeanEntryBytes = (double)total / workingKeys;
    }

    /// <summary>All the keys, the scan's included.</summary>
    public int Count { get; }

    /// <summary>The keys the workloads draw from.</summary>
    public int WorkingKeys { get; }

    /// <summary>The mean key and value bytes of the working keys.</summary>
    public double MeanEntryBytes { get; }

    /// <summary>Key <paramref name="key"/>'s value length.</summary>
    public int ValueLength(int key) => _states[key].ValueLength;

    /// <summary>Takes the next version of key <paramref name="key"/>, to write.</summary>
    public int NextVersion(int key) => Interlocked.Increment(ref _states[key].Version);

    /// <summary>The latest version taken for key <paramref name="key"/>: any value read must have a version from 1 to it.</summary>
    public int LatestVersion(int key) => Volatile.Read(ref _states[key].Version);

    /// <summary>
    /// Makes every key once, before the runs, in the form a side asks for, as BitFaster's own benchmark does
    /// with its keys: for the small shapes, so that making a key is no part of an operation.
    /// </summary>
    public void PrepareKeys(bool asStrings)
    {
        if (asStrings)
        {
            _strings ??= [.. Enumerable.Range(0, Count).Select(CacheData.KeyString)];
            return;
        }

        if (_utf8 is null)
        {
            var offsets = new int[Count + 1];
            for (int i = 0; i < Count; i++)
            {
                offsets[i + 1] = offsets[i] + CacheData.KeyLength(i);
            }

            var utf8 = new byte[offsets[Count]];
            for (int i = 0; i < Count; i++)
            {
                _ = CacheData.WriteKey(i, utf8.AsSpan(offsets[i]));
            }

            (_utf8, _offsets) = (utf8, offsets);
        }
    }

    /// <summary>Key <paramref name="key"/> as a string: made before the runs if <see cref="PrepareKeys"/> was, otherwise now, as a server makes it from a request.</summary>
    public string KeyString(int key) => _strings is { } strings ? strings[key] : CacheData.KeyString(key);

    /// <summary>Key <paramref name="key"/>'s bytes: made before the runs if <see cref="PrepareKeys"/> was, otherwise now in <paramref name="scratch"/>.</summary>
    public ReadOnlySpan<byte> KeyBytes(int key, Span<byte> scratch) => _utf8 is { } utf8
        ? utf8.AsSpan(_offsets![key], _offsets[key + 1] - _offsets[key])
        : scratch[..CacheData.WriteKey(key, scratch)];

    private struct KeyState
    {
        public int Version;
        public int ValueLength;
    }
}
