using System.Globalization;
using jemalloc.Mallctl;

namespace jemalloc;

/// <summary>
/// A mallctl key translated once to its Management Information Base, for keys read or written
/// often (no name parsing on each call). Numeric components, such as the arena index in
/// <c>arena.&lt;i&gt;.purge</c>, can be replaced with <see cref="WithIndex"/>.
/// </summary>
/// <typeparam name="T">The key's value type: <see cref="bool"/>, <see cref="int"/>, <see cref="uint"/>, <see cref="long"/>, <see cref="ulong"/>, <see cref="nint"/>, <see cref="nuint"/>, <see cref="string"/>; any type for <see cref="Run"/>.</typeparam>
/// <remarks>
/// A MIB is one reference to an immutable name and component list, so a copy is one word and each
/// member reads that reference once: a copy racing an assignment on another thread is always one
/// whole MIB, never the name of one key (which the mallctl policy checks) with the components of
/// another (which the call uses).
/// </remarks>
public readonly struct MallctlMib<T>
{
    private readonly MallctlMibData? _data;

    internal MallctlMib(string name, nuint[] mib) => _data = new MallctlMibData(name, mib);

    /// <summary>The name this MIB was looked up from; <see langword="null"/> for <see langword="default"/>.</summary>
    public string Name => _data?.Name!;

    /// <summary>The MIB's components; empty for <see langword="default"/>.</summary>
    public ReadOnlySpan<nuint> Components => _data?.Mib;

    /// <summary>Returns a copy with component <paramref name="position"/> replaced, e.g. position 1 of <c>arena.0.purge</c> for another arena.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="position"/> is outside the MIB (every position is, for <see langword="default"/>).</exception>
    /// <exception cref="ArgumentException">The component at <paramref name="position"/> is a name, not a number (replacing it would address another key).</exception>
    public MallctlMib<T> WithIndex(int position, nuint value)
    {
        MallctlMibData? data = _data;
        ArgumentOutOfRangeException.ThrowIfNegative(position);
        ArgumentOutOfRangeException.ThrowIfGreaterThanOrEqual(position, data?.Mib.Length ?? 0);
        string[] parts = data!.Name.Split('.');
        if (position >= parts.Length || parts[position].Length == 0 || !parts[position].All(char.IsAsciiDigit))
        {
            throw new ArgumentException($"Component {position} of '{data.Name}' is not a number; only numeric components (such as the arena index) can be replaced.", nameof(position));
        }

        nuint[] copy = (nuint[])data.Mib.Clone();
        copy[position] = value;
        return new MallctlMib<T>(data.Name, copy);
    }

    /// <summary>Reads the value.</summary>
    /// <exception cref="MallctlException">The call failed (wrong type, feature missing) or is refused, as the same read by name would be; or the MIB is <see langword="default"/>.</exception>
    /// <exception cref="NotSupportedException"><typeparamref name="T"/> is not a mallctl value type.</exception>
    public T Get()
    {
        MallctlMibData? data = _data;
        return MallctlClient.Read<T>(EffectiveName(data), data?.Mib ?? []);
    }

    /// <summary>Writes the value.</summary>
    /// <exception cref="MallctlException">The call failed (read-only, wrong type, value not allowed) or is refused, as the same write by name would be; or the MIB is <see langword="default"/>.</exception>
    /// <exception cref="NotSupportedException"><typeparamref name="T"/> is not a mallctl value type.</exception>
    public void Set(T value)
    {
        MallctlMibData? data = _data;
        MallctlClient.Write(EffectiveName(data), value, data?.Mib ?? []);
    }

    /// <summary>Runs the key as a command that takes and returns nothing (e.g. <c>arena.&lt;i&gt;.purge</c>).</summary>
    /// <exception cref="MallctlException">The call failed, the key is not a command, or it is refused (e.g. <c>arena.&lt;i&gt;.reset</c> of a <see cref="JemArena"/>'s arena); or the MIB is <see langword="default"/>.</exception>
    public void Run()
    {
        MallctlMibData? data = _data;
        MallctlClient.Run(EffectiveName(data), data?.Mib ?? []);
    }

    /// <inheritdoc/>
    public override string ToString() => _data?.Name ?? string.Empty;

    // The name this MIB now stands for: WithIndex may have replaced numeric components, and the
    // policy decides on the key actually addressed (name and MIB components correspond one to one).
    // Null for default, which the client refuses as a default key.
    private static string EffectiveName(MallctlMibData? data)
    {
        if (data is null || !data.Name.AsSpan().ContainsAnyInRange('0', '9'))
        {
            return data?.Name!;
        }

        string[] parts = data.Name.Split('.');
        for (int i = 0; i < parts.Length && i < data.Mib.Length; i++)
        {
            if (parts[i].Length > 0 && parts[i].All(char.IsAsciiDigit))
            {
                parts[i] = data.Mib[i].ToString(CultureInfo.InvariantCulture);
            }
        }

        return string.Join('.', parts);
    }
}
