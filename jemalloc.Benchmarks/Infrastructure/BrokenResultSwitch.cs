using System.Runtime.InteropServices;

namespace jemalloc.Benchmarks.Infrastructure;

/// <summary>
/// A hidden switch for jembench's own tests: with the environment variable
/// <c>JEMBENCH_BREAK_RESULT_CHECK</c> set, every suite corrupts the result of its last timed
/// operation just before checking it, so the test can see the command fail with exit code 2 in every
/// process layout; with <c>no-checks</c>, no result check is recorded at all, so the test can see the
/// runner's "no result check was made" guard fail the command. Not an option of the command line,
/// and not documented outside the code: it exists only to prove that the checks catch a wrong result.
/// </summary>
/// <remarks>
/// Values: <c>1</c> flips the first, the middle and the last element of a result; <c>first</c>,
/// <c>middle</c> or <c>last</c> flips only that one (a check that skips it lets the command pass, so
/// each position is tested on its own); a scalar result has every bit flipped for any of them.
/// </remarks>
public static class BrokenResultSwitch
{
    /// <summary>The environment variable that turns the switch on.</summary>
    public const string Variable = "JEMBENCH_BREAK_RESULT_CHECK";

    /// <summary>The value that flips the first, middle and last elements.</summary>
    public const string Everywhere = "1";

    /// <summary>The value that flips only the first element.</summary>
    public const string First = "first";

    /// <summary>The value that flips only the middle element.</summary>
    public const string Middle = "middle";

    /// <summary>The value that flips only the last element.</summary>
    public const string Last = "last";

    /// <summary>The value that drops every result check, as a suite that checks nothing would.</summary>
    public const string NoChecks = "no-checks";

    private static string? Value => Environment.GetEnvironmentVariable(Variable);

    /// <summary>The switch's value when it is set to one of the values above (to pass on to a benchmark process), otherwise null.</summary>
    public static string? Setting => Value is Everywhere or First or Middle or Last or NoChecks ? Value : null;

    /// <summary>Whether results are to be corrupted before they are checked.</summary>
    public static bool IsOn => Value is Everywhere or First or Middle or Last;

    /// <summary>Whether result checks are to be dropped instead of recorded (the runner must then fail every benchmark).</summary>
    public static bool DropsChecks => Value == NoChecks;

    /// <summary>When the switch is on, flips the bits of the elements of <paramref name="result"/> it names (each at most once).</summary>
    public static void Corrupt<T>(Span<T> result) where T : unmanaged
    {
        string? value = Value;
        if (result.IsEmpty || value is not (Everywhere or First or Middle or Last))
        {
            return;
        }

        int middle = result.Length / 2, last = result.Length - 1;
        if (value is Everywhere or First)
        {
            Flip(ref result[0]);
        }

        // A short result has fewer distinct positions: flipping one twice would undo it.
        if ((value is Everywhere && middle != 0) || value is Middle)
        {
            Flip(ref result[middle]);
        }

        if ((value is Everywhere && last != middle) || value is Last)
        {
            Flip(ref result[last]);
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
