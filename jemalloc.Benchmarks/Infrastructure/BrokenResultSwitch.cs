using System.Runtime.InteropServices;

namespace jemalloc.Benchmarks.Infrastructure;

/// <summary>
/// A hidden switch for jembench's own tests: with the environment variable
/// <c>JEMBENCH_BREAK_RESULT_CHECK=1</c>, every suite corrupts the result it is about to check (one
/// element of it, or a scalar result), after the measured run, so the test can see the command fail
/// with exit code 2 in every process layout. Not an option of the command line, and not documented
/// outside the code: it exists only to prove that the checks catch a wrong result.
/// </summary>
public static class BrokenResultSwitch
{
    /// <summary>The environment variable that turns the switch on (value <c>1</c>).</summary>
    public const string Variable = "JEMBENCH_BREAK_RESULT_CHECK";

    /// <summary>Whether results are to be corrupted before they are checked.</summary>
    public static bool IsOn => Environment.GetEnvironmentVariable(Variable) == "1";

    /// <summary>When the switch is on, flips the bits of the middle element of <paramref name="result"/>.</summary>
    public static void Corrupt<T>(Span<T> result) where T : unmanaged
    {
        if (IsOn && !result.IsEmpty)
        {
            Flip(ref result[result.Length / 2]);
        }
    }

    /// <summary>When the switch is on, <paramref name="result"/> with every bit flipped; otherwise <paramref name="result"/>.</summary>
    public static T Corrupt<T>(T result) where T : unmanaged
    {
        if (IsOn)
        {
            Flip(ref result);
        }

        return result;
    }

    private static void Flip<T>(ref T value) where T : unmanaged
    {
        Span<byte> bytes = MemoryMarshal.AsBytes(MemoryMarshal.CreateSpan(ref value, 1));
        // Every bit of a number (up to 8 bytes); the first 8 bytes of a record (its Guid, for Employee).
        for (int i = 0; i < Math.Min(bytes.Length, 8); i++)
        {
            bytes[i] = (byte)~bytes[i];
        }
    }
}
