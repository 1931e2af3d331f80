using System.Globalization;

namespace jemalloc;

/// <summary>
/// A mallctl key translated once to its Management Information Base, for keys read or written
/// often (no name parsing on each call). Numeric components, such as the arena index in
/// <c>arena.&lt;i&gt;.purge</c>, can be replaced with <see cref="WithIndex"/>.
/// </summary>
/// <typeparam name="T">The key's value type: <see cref="bool"/>, <see cref="int"/>, <see cref="uint"/>, <see cref="long"/>, <see cref="ulong"/>, <see cref="nint"/>, <see cref="nuint"/>, <see cref="string"/>; any type for <see cref="Run"/>.</typeparam>
public readonly struct MallctlMib<T>
{
    private readonly nuint[] _mib;

    internal MallctlMib(string name, nuint[] mib)
    {
        Name = name;
        _mib = mib;
    }

    /// <summary>The name this MIB was looked up from.</summary>
    public string Name { get; }

    /// <summary>The MIB's components.</summary>
    public ReadOnlySpan<nuint> Components => _mib;

    /// <summary>Returns a copy with component <paramref name="position"/> replaced, e.g. position 1 of <c>arena.0.purge</c> for another arena.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="position"/> is outside the MIB.</exception>
    /// <exception cref="ArgumentException">The component at <paramref name="position"/> is a name, not a number (replacing it would address another key).</exception>
    public MallctlMib<T> WithIndex(int position, nuint value)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(position);
        ArgumentOutOfRangeException.ThrowIfGreaterThanOrEqual(position, _mib.Length);
        string[] parts = Name.Split('.');
        if (position >= parts.Length || parts[position].Length == 0 || !parts[position].All(char.IsAsciiDigit))
        {
            throw new ArgumentException($"Component {position} of '{Name}' is not a number; only numeric components (such as the arena index) can be replaced.", nameof(position));
        }

        nuint[] copy = (nuint[])_mib.Clone();
        copy[position] = value;
        return new MallctlMib<T>(Name, copy);
    }

    /// <summary>Reads the value.</summary>
    /// <exception cref="MallctlException">The call failed (wrong type, feature missing) or is refused, as the same read by name would be.</exception>
    /// <exception cref="NotSupportedException"><typeparamref name="T"/> is not a mallctl value type.</exception>
    public T Get() => MallctlClient.Read<T>(EffectiveName(), _mib);

    /// <summary>Writes the value.</summary>
    /// <exception cref="MallctlException">The call failed (read-only, wrong type, value not allowed) or is refused, as the same write by name would be.</exception>
    /// <exception cref="NotSupportedException"><typeparamref name="T"/> is not a mallctl value type.</exception>
    public void Set(T value) => MallctlClient.Write(EffectiveName(), value, _mib);

    /// <summary>Runs the key as a command that takes and returns nothing (e.g. <c>arena.&lt;i&gt;.purge</c>).</summary>
    /// <exception cref="MallctlException">The call failed, the key is not a command, or it is refused (e.g. <c>arena.&lt;i&gt;.reset</c> of a <see cref="JemArena"/>'s arena).</exception>
    public void Run() => MallctlClient.Run(EffectiveName(), _mib);

    /// <inheritdoc/>
    public override string ToString() => Name;

    // The name this MIB now stands for: WithIndex may have replaced numeric components, and the
    // policy decides on the key actually addressed (name and MIB components correspond one to one).
    private string EffectiveName()
    {
        if (!Name.AsSpan().ContainsAnyInRange('0', '9'))
        {
            return Name;
        }

        string[] parts = Name.Split('.');
        for (int i = 0; i < parts.Length && i < _mib.Length; i++)
        {
            if (parts[i].Length > 0 && parts[i].All(char.IsAsciiDigit))
            {
                parts[i] = _mib[i].ToString(CultureInfo.InvariantCulture);
            }
        }

        return string.Join('.', parts);
    }
}
