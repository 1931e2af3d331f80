namespace jemalloc.Cli.Strings;

/// <summary>
/// A group-by on UTF-8 keys that allocates only per distinct key: the row's bytes are looked up as a
/// span (<see cref="Dictionary{TKey, TValue}.GetAlternateLookup{TAlternateKey}"/>), and a key's bytes are
/// copied once, when it is first seen. Counts rows and adds amounts per key.
/// </summary>
public sealed class Utf8GroupTable
{
    private readonly Dictionary<byte[], int> _groups = new(Utf8KeyComparer.Instance);
    private readonly Dictionary<byte[], int>.AlternateLookup<ReadOnlySpan<byte>> _lookup;
    private long[] _rows = new long[256];
    private long[] _cents = new long[256];

    /// <summary>Creates an empty table.</summary>
    public Utf8GroupTable() => _lookup = _groups.GetAlternateLookup<ReadOnlySpan<byte>>();

    /// <summary>Adds one row of group <paramref name="key"/> with <paramref name="cents"/> (0 for a null amount).</summary>
    public void Add(ReadOnlySpan<byte> key, long cents) => Add(key, 1, cents);

    /// <summary>Adds <paramref name="rows"/> rows of group <paramref name="key"/> whose amounts add up to <paramref name="cents"/>.</summary>
    public void Add(ReadOnlySpan<byte> key, long rows, long cents)
    {
        if (!_lookup.TryGetValue(key, out int group))
        {
            group = _groups.Count;
            _lookup[key] = group;
            if (group == _rows.Length)
            {
                Array.Resize(ref _rows, group * 2);
                Array.Resize(ref _cents, group * 2);
            }
        }

        _rows[group] += rows;
        _cents[group] += cents;
    }

    /// <summary>The groups, their keys decoded from UTF-8 (once per group), in <see cref="StringsGroup.Sorted"/>'s order.</summary>
    public StringsGroup[] ToGroups() =>
        StringsGroup.Sorted(_groups.Select(pair => new StringsGroup(System.Text.Encoding.UTF8.GetString(pair.Key), _rows[pair.Value], _cents[pair.Value])));
}
