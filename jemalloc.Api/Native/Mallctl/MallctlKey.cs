using System.Runtime.CompilerServices;

namespace jemalloc;

/// <summary>
/// A mallctl key together with the .NET type of its value, so reads and writes are typed at
/// compile time: <c>MallctlKeys.Stats.Allocated.Get()</c>. Well-known keys are in <see cref="MallctlKeys"/>.
/// </summary>
/// <typeparam name="T">bool (C bool, 1 byte), uint (unsigned), ulong (uint64_t), nuint (size_t), nint (ssize_t), int, long or string (const char*).</typeparam>
/// <param name="Name">The key, e.g. <c>opt.narenas</c>.</param>
public readonly unsafe record struct MallctlKey<T>(string Name)
{
    /// <summary>Reads the value.</summary>
    /// <exception cref="MallctlException">The key does not exist, or <typeparamref name="T"/> does not match it.</exception>
    /// <exception cref="NotSupportedException"><typeparamref name="T"/> is not a mallctl value type.</exception>
    public T Get()
    {
        if (typeof(T) == typeof(string))
        {
            return (T)(object)Jem.GetMallctlString(Name)!;
        }

        MallctlValue.ThrowIfUnsupported<T>();
        T value = default!;
        nuint size = (nuint)Unsafe.SizeOf<T>();
        Jem.ThrowIfFailed(Jem.Mallctl(Name, Unsafe.AsPointer(ref value), &size, null, 0), Name, typeof(T));
        return value;
    }

    /// <summary>Writes the value.</summary>
    /// <exception cref="MallctlException">The key does not exist, is read-only, or the value does not fit it.</exception>
    /// <exception cref="NotSupportedException"><typeparamref name="T"/> is not a mallctl value type.</exception>
    public void Set(T value)
    {
        if (typeof(T) == typeof(string))
        {
            Jem.SetMallctlString(Name, (string)(object)value!);
            return;
        }

        MallctlValue.ThrowIfUnsupported<T>();
        Jem.ThrowIfFailed(Jem.Mallctl(Name, null, null, Unsafe.AsPointer(ref value), (nuint)Unsafe.SizeOf<T>()), Name, typeof(T));
    }

    /// <summary>Looks the key up once, for repeated use without name parsing.</summary>
    /// <exception cref="MallctlException">The key does not exist.</exception>
    public MallctlMib<T> ToMib() => Jem.MallctlNameToMib<T>(Name);

    /// <inheritdoc/>
    public override string ToString() => Name;
}
