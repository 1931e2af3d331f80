using System.Runtime.CompilerServices;

namespace jemalloc.Benchmarks.Infrastructure;

/// <summary>Deterministic, type-independent values the suites write and then check.</summary>
public static class FillValue
{
    /// <summary>
    /// The value every suite writes and checks: <see cref="Employee.Sample"/> for the <c>--udt</c>
    /// record (a valid record, whose <see cref="decimal"/> is a valid number), and for a number type
    /// the value whose every byte is <see cref="Pattern"/>.
    /// </summary>
    public static T Of<T>() where T : unmanaged
    {
        if (typeof(T) == typeof(Employee))
        {
            Employee sample = Employee.Sample;
            return Unsafe.As<Employee, T>(ref sample);
        }

        T value = default;
        Unsafe.InitBlockUnaligned(ref Unsafe.As<T, byte>(ref value), Pattern, (uint)Unsafe.SizeOf<T>());
        return value;
    }

    /// <summary>The byte every number fill value is made of, and the byte the machine-limit rows write.</summary>
    public const byte Pattern = 0x5A;
}
