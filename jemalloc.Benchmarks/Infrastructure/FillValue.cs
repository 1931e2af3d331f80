using System.Runtime.CompilerServices;

namespace jemalloc.Benchmarks.Infrastructure;

/// <summary>Deterministic, type-independent values the suites write and then check.</summary>
public static class FillValue
{
    /// <summary>The bits 0x5A repeated: a value of any unmanaged type whose every byte is 0x5A.</summary>
    public static T Of<T>() where T : unmanaged
    {
        T value = default;
        Unsafe.InitBlockUnaligned(ref Unsafe.As<T, byte>(ref value), Pattern, (uint)Unsafe.SizeOf<T>());
        return value;
    }

    /// <summary>The byte every fill value is made of.</summary>
    public const byte Pattern = 0x5A;
}
