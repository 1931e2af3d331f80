using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace jemalloc;

/// <summary>
/// A mallctl key translated once to its Management Information Base, for keys read or written
/// often (no name parsing on each call). Numeric components, such as the arena index in
/// <c>arena.&lt;i&gt;.purge</c>, can be replaced with <see cref="WithIndex"/>.
/// </summary>
/// <typeparam name="T">The key's value type: <see cref="bool"/>, <see cref="int"/>, <see cref="uint"/>, <see cref="long"/>, <see cref="ulong"/>, <see cref="nint"/>, <see cref="nuint"/>, <see cref="string"/>; any type for <see cref="Run"/>.</typeparam>
public readonly unsafe struct MallctlMib<T>
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
    public MallctlMib<T> WithIndex(int position, nuint value)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(position);
        ArgumentOutOfRangeException.ThrowIfGreaterThanOrEqual(position, _mib.Length);
        nuint[] copy = (nuint[])_mib.Clone();
        copy[position] = value;
        return new MallctlMib<T>(Name, copy);
    }

    /// <summary>Reads the value.</summary>
    /// <exception cref="MallctlException">The call failed (wrong type, feature missing).</exception>
    /// <exception cref="NotSupportedException"><typeparamref name="T"/> is not a mallctl value type.</exception>
    public T Get()
    {
        if (typeof(T) == typeof(string))
        {
            MallctlStringKeys.ThrowIfNotString(Name);
            byte* text = null;
            nuint length = (nuint)sizeof(byte*);
            Check(Jem.MallctlByMib(_mib, &text, &length, null, 0));
            return (T)(object)Marshal.PtrToStringUTF8((nint)text)!;
        }

        MallctlValue.ThrowIfUnsupported<T>();
        T value = default!;
        nuint size = (nuint)Unsafe.SizeOf<T>();
        Check(Jem.MallctlByMib(_mib, Unsafe.AsPointer(ref value), &size, null, 0));
        return value;
    }

    /// <summary>Writes the value.</summary>
    /// <exception cref="MallctlException">The call failed (read-only, wrong type, value not allowed).</exception>
    /// <exception cref="NotSupportedException"><typeparamref name="T"/> is not a mallctl value type.</exception>
    public void Set(T value)
    {
        if (typeof(T) == typeof(string))
        {
            MallctlStringKeys.ThrowIfNotString(Name);
            ArgumentNullException.ThrowIfNull(value);
            nint utf8 = Marshal.StringToCoTaskMemUTF8((string)(object)value!);
            try
            {
                Check(Jem.MallctlByMib(_mib, null, null, &utf8, (nuint)sizeof(nint)));
            }
            finally
            {
                Marshal.FreeCoTaskMem(utf8);
            }

            return;
        }

        MallctlValue.ThrowIfUnsupported<T>();
        Check(Jem.MallctlByMib(_mib, null, null, Unsafe.AsPointer(ref value), (nuint)Unsafe.SizeOf<T>()));
    }

    /// <summary>Runs the key as a command that takes and returns nothing (e.g. <c>arena.&lt;i&gt;.purge</c>).</summary>
    /// <exception cref="MallctlException">The call failed.</exception>
    public void Run() => Check(Jem.MallctlByMib(_mib, null, null, null, 0));

    /// <inheritdoc/>
    public override string ToString() => Name;

    private void Check(int result) => Jem.ThrowIfFailed(result, Name, typeof(T));
}
