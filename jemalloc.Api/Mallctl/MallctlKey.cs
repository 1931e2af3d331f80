using jemalloc.Mallctl;

namespace jemalloc;

/// <summary>
/// A mallctl key together with the .NET type of its value, so reads and writes are typed at
/// compile time: <c>MallctlKeys.Stats.Allocated.Get()</c>. Well-known keys are in <see cref="MallctlKeys"/>.
/// Calls are checked as <see cref="Jem.GetMallctl{T}(string)"/> and <see cref="Jem.SetMallctl{T}(string, T)"/> check them.
/// </summary>
/// <typeparam name="T">bool (C bool, 1 byte), uint (unsigned), ulong (uint64_t), nuint (size_t), nint (ssize_t), int, long or string (const char*).</typeparam>
/// <param name="Name">The key, e.g. <c>opt.narenas</c>.</param>
public readonly record struct MallctlKey<T>(string Name)
{
    /// <summary>Reads the value.</summary>
    /// <exception cref="MallctlException">The key does not exist, <typeparamref name="T"/> does not match its C type, or the read is refused (see <see cref="Jem.GetMallctl{T}(string)"/>).</exception>
    /// <exception cref="NotSupportedException"><typeparamref name="T"/> is not a mallctl value type.</exception>
    public T Get() => MallctlClient.Read<T>(Name);

    /// <summary>Writes the value.</summary>
    /// <exception cref="MallctlException">The key does not exist, is read-only, the value does not fit it, or the write is refused (see <see cref="Jem.SetMallctl{T}(string, T)"/>; e.g. <c>arenas.create</c> cannot be written).</exception>
    /// <exception cref="NotSupportedException"><typeparamref name="T"/> is not a mallctl value type.</exception>
    /// <exception cref="ArgumentNullException"><typeparamref name="T"/> is string and <paramref name="value"/> is null.</exception>
    public void Set(T value) => MallctlClient.Write(Name, value);

    /// <summary>Looks the key up once, for repeated use without name parsing.</summary>
    /// <exception cref="MallctlException">The key does not exist.</exception>
    public MallctlMib<T> ToMib() => new(Name, MallctlClient.LookupMib(Name));

    /// <inheritdoc/>
    public override string ToString() => Name;
}
