using jemalloc.Benchmarks.Infrastructure;
using jemalloc.Benchmarks.Suites.HugePages;
using jemalloc.Cli.Tests.Verbs;

namespace jemalloc.Cli.Tests.Benchmarks;

/// <summary>
/// The <c>hugepages</c> suite checks what its last timed operation made, not the result of an extra
/// run of its own: a cleanup with no timed operation before it has nothing to check and fails, and
/// one after a timed operation checks that operation's array or result column.
/// </summary>
[Collection(JembenchRuns.Name)]
public class HugePagesResultCheckTests
{
    private const long Rows = 1009;

    public static TheoryData<string> Creates() => ["CreateManagedFresh", "CreateManagedReused", "CreateSmallPages", "CreateHugePages"];

    public static TheoryData<string> Columnars() => ["ColumnarManaged", "ColumnarSmallPages", "ColumnarHugePages"];

    [Theory]
    [MemberData(nameof(Creates))]
    public void A_create_cleanup_with_no_timed_operation_before_it_fails_instead_of_making_its_own(string create)
    {
        var suite = new HugePagesBenchmarks { Parameter = Rows };
        suite.SetupCreate();
        var error = Assert.Throws<BenchmarkVerificationException>(() => Cleanup(suite, create));
        Assert.Contains("the last timed operation left the array it created", error.Message, StringComparison.Ordinal);
    }

    [Theory]
    [MemberData(nameof(Creates))]
    public void A_create_cleanup_checks_the_array_the_timed_operation_made(string create)
    {
        var suite = new HugePagesBenchmarks { Parameter = Rows };
        suite.SetupCreate();
        int before = ResultChecks.Count;
        Assert.Equal((ulong)Rows, Run(suite, create));
        Assert.Equal((ulong)Rows, Run(suite, create));
        Cleanup(suite, create);
        ResultCheck[] checks = [.. ResultChecks.All.Skip(before).Where(check => check.Benchmark == $"hugepages create x{Rows}: {create}")];
        Assert.Equal(3, checks.Length);
        Assert.All(checks, check => Assert.True(check.Passed, check.Description));
    }

    [Theory]
    [MemberData(nameof(Columnars))]
    public void A_columnar_cleanup_checks_the_result_column_the_timed_operation_made(string columnar)
    {
        var suite = new HugePagesBenchmarks { Parameter = Rows };
        suite.SetupColumnar();
        Assert.Throws<BenchmarkVerificationException>(() => Cleanup(suite, columnar));

        suite = new HugePagesBenchmarks { Parameter = Rows };
        suite.SetupColumnar();
        int before = ResultChecks.Count;
        Run(suite, columnar);
        Run(suite, columnar);
        Cleanup(suite, columnar);
        ResultCheck[] checks = [.. ResultChecks.All.Skip(before).Where(check => check.Benchmark == $"hugepages columnar x{Rows}: {columnar}")];
        Assert.Equal(3, checks.Length);
        Assert.Contains(checks, check => check.Description.Contains("rows of the result column (last timed operation)", StringComparison.Ordinal));
        Assert.All(checks, check => Assert.True(check.Passed, check.Description));
    }

    private static ulong Run(HugePagesBenchmarks suite, string benchmark) => benchmark switch
    {
        "CreateManagedFresh" => suite.CreateManagedFresh(),
        "CreateManagedReused" => suite.CreateManagedReused(),
        "CreateSmallPages" => suite.CreateSmallPages(),
        "CreateHugePages" => suite.CreateHugePages(),
        "ColumnarManaged" => suite.ColumnarManaged(),
        "ColumnarSmallPages" => suite.ColumnarSmallPages(),
        "ColumnarHugePages" => suite.ColumnarHugePages(),
        _ => throw new ArgumentOutOfRangeException(nameof(benchmark)),
    };

    private static void Cleanup(HugePagesBenchmarks suite, string benchmark)
    {
        switch (benchmark)
        {
            case "CreateManagedFresh": suite.CleanupCreateManagedFresh(); break;
            case "CreateManagedReused": suite.CleanupCreateManagedReused(); break;
            case "CreateSmallPages": suite.CleanupCreateSmallPages(); break;
            case "CreateHugePages": suite.CleanupCreateHugePages(); break;
            case "ColumnarManaged": suite.CleanupColumnarManaged(); break;
            case "ColumnarSmallPages": suite.CleanupColumnarSmallPages(); break;
            case "ColumnarHugePages": suite.CleanupColumnarHugePages(); break;
            default: throw new ArgumentOutOfRangeException(nameof(benchmark));
        }
    }
}
