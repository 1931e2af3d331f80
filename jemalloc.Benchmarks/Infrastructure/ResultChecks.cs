using System.Collections.Concurrent;
using System.Globalization;
using System.Numerics;
using System.Text;

namespace jemalloc.Benchmarks.Infrastructure;

/// <summary>
/// Collects the result checks the suites make after each run, so that the runner can fail loudly
/// on a wrong answer. A failing check also throws, which BenchmarkDotNet reports for the benchmark.
/// </summary>
/// <remarks>
/// A benchmark that runs in its own process (the <c>alloc</c> suite's jobs) records its checks in
/// that process, where the launching process cannot see them, and BenchmarkDotNet only logs an
/// exception thrown by a global cleanup. So the launching process names a file in the job's
/// environment (<see cref="FileVariable"/>) and every check made in the child is also appended to it,
/// one line each, as it is made; <see cref="ResultCheckCollector"/> reads it back after each
/// benchmark. A child that dies before checking leaves no line, which the runner reports as a
/// benchmark without result checks: a failure too.
/// </remarks>
public static class ResultChecks
{
    /// <summary>The environment variable naming the file a benchmark process appends its checks to.</summary>
    public const string FileVariable = "JEMBENCH_RESULT_CHECKS_FILE";

    private const string PassedMark = "PASS";
    private const string FailedMark = "FAIL";

    private static readonly ConcurrentQueue<ResultCheck> Records = new();
    private static readonly object FileLock = new();

    /// <summary>The checks made so far in this process.</summary>
    public static IReadOnlyList<ResultCheck> All => [.. Records];

    /// <summary>The number of checks made so far in this process.</summary>
    public static int Count => Records.Count;

    /// <summary>Forgets the checks made so far.</summary>
    public static void Clear() => Records.Clear();

    /// <summary>Records a check; throws when it failed.</summary>
    /// <exception cref="BenchmarkVerificationException"><paramref name="passed"/> is false.</exception>
    public static void Check(string benchmark, bool passed, string description)
    {
        if (BrokenResultSwitch.DropsChecks)
        {
            // The test switch's "no-checks": behave as a suite that checks nothing, which the runner must fail.
            return;
        }

        var check = new ResultCheck(benchmark, description, passed);
        Records.Enqueue(check);
        AppendToFile(check);
        if (!passed)
        {
            throw new BenchmarkVerificationException($"{benchmark}: wrong result: {description}");
        }
    }

    /// <summary>Records that two values are equal; throws when they are not.</summary>
    /// <exception cref="BenchmarkVerificationException">They differ.</exception>
    public static void Equal<T>(string benchmark, T expected, T actual, string what)
        => Check(benchmark, EqualityComparer<T>.Default.Equals(expected, actual), $"{what}: expected {expected}, got {actual}");

    /// <summary>
    /// Records that a sum of <paramref name="count"/> integer-valued terms whose exact total is
    /// <paramref name="exact"/>, added in an order the check does not know, is right. Integer types
    /// are compared exactly (they wrap the same way in any order). Floating-point sums must be exact
    /// when <paramref name="exactInAnyOrder"/> (every term and partial sum is an integer no larger
    /// than 2^24 for <see cref="float"/> or 2^53 for <see cref="double"/>, so every addition is
    /// exact), otherwise within the textbook bound |error| ≤ n·ε·Σ|x|, with ε = 2^-24 for
    /// <see cref="float"/> and 2^-53 for <see cref="double"/>.
    /// </summary>
    /// <exception cref="BenchmarkVerificationException">The sum is wrong.</exception>
    public static void SumWithinBound<T>(string benchmark, long exact, T actual, long count, double sumOfMagnitudes, bool exactInAnyOrder)
        where T : INumber<T>
    {
        double epsilon = typeof(T) == typeof(float) ? 1.0 / (1 << 24) : typeof(T) == typeof(double) ? 1.0 / (1L << 53) : 0;
        double got = double.CreateTruncating(actual);
        if (epsilon == 0)
        {
            T expected = T.CreateTruncating(exact);
            Equal(benchmark, expected, actual, "the sum (integer, exact in any order)");
            return;
        }

        double bound = exactInAnyOrder ? 0 : count * epsilon * sumOfMagnitudes;
        Check(benchmark, Math.Abs(got - exact) <= bound && !double.IsNaN(got),
            string.Create(CultureInfo.InvariantCulture,
                $"the sum is {got:R}, expected {exact:R} within {bound:G6} ({(exactInAnyOrder ? "every partial sum is a representable integer: exact in any order" : $"n·ε·Σ|x| for n = {count:N0}")})"));
    }

    /// <summary>Reads the checks a benchmark process appended to <paramref name="path"/>, from byte <paramref name="offset"/> on.</summary>
    /// <returns>The checks, and the offset to read from next time.</returns>
    public static (IReadOnlyList<ResultCheck> Checks, long NextOffset) ReadFile(string path, long offset)
    {
        ArgumentNullException.ThrowIfNull(path);
        if (!File.Exists(path))
        {
            return ([], offset);
        }

        using var stream = new FileStream(path, FileMode.Open, FileAccess.Read, FileShare.ReadWrite | FileShare.Delete);
        stream.Seek(offset, SeekOrigin.Begin);
        using var reader = new StreamReader(stream, Encoding.UTF8);
        string text = reader.ReadToEnd();
        // Only whole lines: a line being written has no newline yet.
        int end = text.LastIndexOf('\n') + 1;
        var checks = new List<ResultCheck>();
        foreach (string line in text[..end].Split('\n', StringSplitOptions.RemoveEmptyEntries))
        {
            string[] parts = line.Split('\t', 3);
            checks.Add(parts.Length == 3 && (parts[0] == PassedMark || parts[0] == FailedMark)
                ? new ResultCheck(parts[1], parts[2], parts[0] == PassedMark)
                : new ResultCheck("(unreadable check line)", line, false));
        }

        return (checks, offset + Encoding.UTF8.GetByteCount(text[..end]));
    }

    private static void AppendToFile(ResultCheck check)
    {
        string? path = Environment.GetEnvironmentVariable(FileVariable);
        if (string.IsNullOrEmpty(path))
        {
            return;
        }

        string line = $"{(check.Passed ? PassedMark : FailedMark)}\t{OneLine(check.Benchmark)}\t{OneLine(check.Description)}\n";
        lock (FileLock)
        {
            using var stream = new FileStream(path, FileMode.Append, FileAccess.Write, FileShare.ReadWrite);
            byte[] bytes = Encoding.UTF8.GetBytes(line);
            stream.Write(bytes);
            stream.Flush(flushToDisk: true);
        }
    }

    private static string OneLine(string text) => text.Replace('\t', ' ').Replace('\r', ' ').Replace('\n', ' ');
}
