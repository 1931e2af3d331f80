using System.Runtime.CompilerServices;

namespace jemalloc.Mallctl;

/// <summary>The .NET types that stand for mallctl's C value types.</summary>
internal static class MallctlValue
{
    /// <summary>Whether <typeparamref name="T"/> maps to a mallctl C type (bool, unsigned, uint64_t, size_t, ssize_t, const char*).</summary>
    internal static bool IsSupported<T>() =>
        typeof(T) == typeof(bool) || typeof(T) == typeof(int) || typeof(T) == typeof(uint) ||
        typeof(T) == typeof(long) || typeof(T) == typeof(ulong) || typeof(T) == typeof(nint) ||
        typeof(T) == typeof(nuint) || typeof(T) == typeof(string);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static void ThrowIfUnsupported<T>()
    {
        if (!IsSupported<T>())
        {
            Throw(typeof(T));
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void Throw(Type type) =>
        throw new NotSupportedException($"{type.Name} is not a mallctl value type; use bool, int, uint, long, ulong, nint, nuint or string.");
}
