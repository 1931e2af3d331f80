using System.Diagnostics;
using System.Reflection;
using System.Runtime.InteropServices;
using Xunit;
using Xunit.Abstractions;
using Xunit.Sdk;

namespace jemalloc.Tests.Runner;

/// <summary>
/// Runs jemalloc.Tests in this process with xunit's own execution engine (xunit.execution, the part
/// of the xunit package that runs tests under any runner) and prints one line per failed or
/// skipped test, then a summary in the form <c>dotnet test</c> prints (which <c>.ci/run</c> counts).
/// </summary>
/// <remarks>
/// Usage: <c>jemalloc.Tests.Runner [--class PREFIX]... [--exclude-class PREFIX]... [--test TEXT]... [--exclude-test TEXT]...
/// [--trait NAME=VALUE]... [--parallel N] [--test-timeout SECONDS] [--list] [--verbose]</c>.
/// <c>--class</c> runs only test classes whose full name starts with a prefix; <c>--exclude-class</c>
/// leaves some out; <c>--test</c> runs only tests whose name contains a text, <c>--exclude-test</c>
/// leaves those out; <c>--trait</c> also runs the tests that carry an xunit trait, whatever their
/// class (<c>--exclude-test</c> still applies); <c>--parallel</c> sets how many test collections run at once (default: the
/// processor count; 1 runs them one after another). <c>--test-timeout</c> ends the run when one test
/// has been running that long, naming the tests still running (an emulator that hangs must fail the
/// run with a name, not stall it). Exit code 0 when nothing failed, 1 when a test failed or timed out,
/// 2 for a usage error.
/// </remarks>
internal static class Program
{
    private static readonly Lock ConsoleGate = new();

    private static int Main(string[] args)
    {
        var include = new List<string>();
        var exclude = new List<string>();
        var names = new List<string>();
        var excludedNames = new List<string>();
        var traits = new List<(string Name, string Value)>();
        bool list = false, verbose = false;
        int parallel = Environment.ProcessorCount;
        int testTimeout = 0;
        for (int i = 0; i < args.Length; i++)
        {
            switch (args[i])
            {
                case "--class" when i + 1 < args.Length: include.Add(args[++i]); break;
                case "--exclude-class" when i + 1 < args.Length: exclude.Add(args[++i]); break;
                case "--test" when i + 1 < args.Length: names.Add(args[++i]); break;
                case "--exclude-test" when i + 1 < args.Length: excludedNames.Add(args[++i]); break;
                case "--trait" when i + 1 < args.Length && args[i + 1].IndexOf('=', StringComparison.Ordinal) > 0:
                    string[] trait = args[++i].Split('=', 2);
                    traits.Add((trait[0], trait[1]));
                    break;
                case "--parallel" when i + 1 < args.Length && int.TryParse(args[i + 1], out parallel) && parallel > 0: i++; break;
                case "--test-timeout" when i + 1 < args.Length && int.TryParse(args[i + 1], out testTimeout) && testTimeout > 0: i++; break;
                case "--list": list = true; break;
                case "--verbose": verbose = true; break;
                default:
                    Console.Error.WriteLine($"unknown argument '{args[i]}'; usage: [--class PREFIX]... [--exclude-class PREFIX]... [--test TEXT]... [--exclude-test TEXT]... [--trait NAME=VALUE]... [--parallel N] [--test-timeout SECONDS] [--list] [--verbose]");
                    return 2;
            }
        }

        string target = $"{RuntimeInformation.RuntimeIdentifier} ({RuntimeInformation.OSDescription.Trim()}, {RuntimeInformation.ProcessArchitecture})";
        Console.WriteLine($"jemalloc.Tests on {target}");
        var clock = Stopwatch.StartNew();

        // The test assembly is a project reference, so it and its dependencies are in this app's deps.json.
        Assembly tests = Assembly.Load(new AssemblyName("jemalloc.Tests"));
        using var framework = new XunitTestFramework(new NullMessageSink());
        var discovered = new List<IXunitTestCase>();
        using (ITestFrameworkDiscoverer discoverer = framework.GetDiscoverer(new ReflectionAssemblyInfo(tests)))
        using (var discovery = new Sink())
        {
            discoverer.Find(includeSourceInformation: false, discovery, new Options());
            discovery.Finished.Wait();
            discovered.AddRange(discovery.TestCases.OfType<IXunitTestCase>());
        }

        List<IXunitTestCase> selected = discovered.Where(testCase =>
        {
            string type = testCase.TestMethod.TestClass.Class.Name;
            bool byClassAndName = (include.Count == 0 || include.Any(p => type.StartsWith(p, StringComparison.Ordinal)))
                && !exclude.Any(p => type.StartsWith(p, StringComparison.Ordinal))
                && (names.Count == 0 || names.Any(n => testCase.DisplayName.Contains(n, StringComparison.Ordinal)));
            bool byTrait = traits.Any(t => testCase.Traits.TryGetValue(t.Name, out List<string>? values) && values.Contains(t.Value, StringComparer.Ordinal));
            return (byClassAndName || byTrait)
                && !excludedNames.Any(n => testCase.DisplayName.Contains(n, StringComparison.Ordinal));
        }).ToList();
        if (list)
        {
            foreach (IXunitTestCase testCase in selected)
            {
                Console.WriteLine($"  {testCase.DisplayName}");
            }

            Console.WriteLine($"{selected.Count} of {discovered.Count} tests");
            return 0;
        }

        using var execution = new Sink { Verbose = verbose };
        using (ITestFrameworkExecutor executor = framework.GetExecutor(tests.GetName()))
        {
            // Test collections in parallel, as dotnet test runs them (xunit's default), on the machine's
            // cores unless told otherwise; one at a time when --parallel 1.
            var options = new Options();
            options.SetValue("xunit.execution.MaxParallelThreads", (int?)parallel);
            options.SetValue("xunit.execution.DisableParallelization", (bool?)(parallel == 1));
            executor.RunTests(selected, execution, options);
            while (!execution.Finished.Wait(TimeSpan.FromSeconds(5)))
            {
                if (testTimeout > 0 && execution.LongestRunning(TimeSpan.FromSeconds(testTimeout)) is { Count: > 0 } hung)
                {
                    foreach (string name in hung)
                    {
                        Print($"  TIMEOUT {name} (still running after {testTimeout} s)");
                    }

                    Console.WriteLine($"Failed!  - Failed: {execution.Failed + execution.Errors + 1,4}, Passed: {execution.Passed,4}, Skipped: {execution.Skipped,4}, Total: {execution.Passed + execution.Failed + execution.Skipped + 1,4}, Duration: {clock.Elapsed.TotalSeconds:0} s - jemalloc.Tests.dll ({RuntimeInformation.RuntimeIdentifier}, stopped: a test did not finish)");
                    Console.Out.Flush();
                    // The hung test's thread cannot be stopped; the process ends with it.
                    WindowsProcess.Terminate(1);
                    Environment.Exit(1);
                }
            }
        }

        foreach ((string reason, int count) in execution.SkipReasons)
        {
            Console.WriteLine($"  skipped {count,3}: {reason}");
        }

        int failed = execution.Failed + execution.Errors;
        int total = execution.Passed + execution.Failed + execution.Skipped;
        string verdict = failed == 0 ? "Passed!" : "Failed!";
        // The same form as dotnet test's summary line, so .ci/run counts these results too.
        Console.WriteLine($"{verdict}  - Failed: {failed,4}, Passed: {execution.Passed,4}, Skipped: {execution.Skipped,4}, Total: {total,4}, Duration: {clock.Elapsed.TotalSeconds:0} s - jemalloc.Tests.dll ({RuntimeInformation.RuntimeIdentifier})");
        int exitCode = failed == 0 && total > 0 ? 0 : 1;
        WindowsProcess.Terminate(exitCode);
        return exitCode;
    }

    /// <summary>xunit's options: a property bag; anything not set takes xunit's default (or the assembly's attributes).</summary>
    private sealed class Options : ITestFrameworkDiscoveryOptions, ITestFrameworkExecutionOptions
    {
        private readonly Dictionary<string, object?> _values = new(StringComparer.Ordinal);

        public TValue GetValue<TValue>(string name) => _values.TryGetValue(name, out object? value) && value is TValue typed ? typed : default!;

        public void SetValue<TValue>(string name, TValue value) => _values[name] = value;
    }

    /// <summary>Collects discovered test cases and prints results as they arrive.</summary>
    private sealed class Sink : LongLivedMarshalByRefObject, IMessageSink, IDisposable
    {
        public ManualResetEventSlim Finished { get; } = new();

        public List<ITestCase> TestCases { get; } = [];

        public SortedDictionary<string, int> SkipReasons { get; } = new(StringComparer.Ordinal);

        public bool Verbose { get; init; }

        public int Passed, Failed, Skipped, Errors;

        private readonly Dictionary<string, Stopwatch> _running = new(StringComparer.Ordinal);

        /// <summary>The tests that have been running for at least <paramref name="limit"/>.</summary>
        public List<string> LongestRunning(TimeSpan limit)
        {
            lock (_running)
            {
                return _running.Where(test => test.Value.Elapsed >= limit).Select(test => test.Key).ToList();
            }
        }

        public bool OnMessage(IMessageSinkMessage message)
        {
            switch (message)
            {
                case ITestCaseDiscoveryMessage discovered:
                    lock (TestCases)
                    {
                        TestCases.Add(discovered.TestCase);
                    }

                    break;
                case IDiscoveryCompleteMessage:
                case ITestAssemblyFinished:
                    Finished.Set();
                    break;
                case ITestStarting starting:
                    lock (_running)
                    {
                        _running[starting.Test.DisplayName] = Stopwatch.StartNew();
                    }

                    if (Verbose)
                    {
                        Print($"  start   {starting.Test.DisplayName}");
                    }

                    break;
                case ITestFinished finished:
                    lock (_running)
                    {
                        _running.Remove(finished.Test.DisplayName);
                    }

                    break;
                case ITestPassed passed:
                    Interlocked.Increment(ref Passed);
                    if (Verbose)
                    {
                        Print($"  passed  {passed.Test.DisplayName} ({passed.ExecutionTime:0.000} s)");
                    }

                    break;
                case ITestFailed failed:
                    Interlocked.Increment(ref Failed);
                    Print($"  FAILED  {failed.Test.DisplayName} ({failed.ExecutionTime:0.000} s){Environment.NewLine}" +
                        $"    {string.Join(" / ", failed.ExceptionTypes)}: {string.Join(Environment.NewLine, failed.Messages)}{Environment.NewLine}" +
                        $"{Indent(string.Join(Environment.NewLine, failed.StackTraces))}{Indent(failed.Output)}");
                    break;
                case ITestSkipped skipped:
                    Interlocked.Increment(ref Skipped);
                    lock (SkipReasons)
                    {
                        SkipReasons[skipped.Reason] = SkipReasons.GetValueOrDefault(skipped.Reason) + 1;
                    }

                    if (Verbose)
                    {
                        Print($"  skipped {skipped.Test.DisplayName}: {skipped.Reason}");
                    }

                    break;
                case IErrorMessage error:
                    Interlocked.Increment(ref Errors);
                    Print($"  ERROR   {string.Join(" / ", error.ExceptionTypes)}: {string.Join(Environment.NewLine, error.Messages)}{Environment.NewLine}{Indent(string.Join(Environment.NewLine, error.StackTraces))}");
                    break;
                case ITestCleanupFailure or ITestClassCleanupFailure or ITestCollectionCleanupFailure or ITestAssemblyCleanupFailure or ITestCaseCleanupFailure or ITestMethodCleanupFailure:
                    var failure = (IFailureInformation)message;
                    Interlocked.Increment(ref Errors);
                    Print($"  CLEANUP FAILED  {message.GetType().Name}: {string.Join(" / ", failure.ExceptionTypes)}: {string.Join(Environment.NewLine, failure.Messages)}");
                    break;
            }

            return true;
        }

        public void Dispose() => Finished.Dispose();
    }

    private static string Indent(string? text) =>
        string.IsNullOrWhiteSpace(text) ? "" : string.Join(Environment.NewLine, text.TrimEnd().Split('\n').Select(line => "      " + line.TrimEnd('\r'))) + Environment.NewLine;

    private static void Print(string line)
    {
        lock (ConsoleGate)
        {
            Console.WriteLine(line);
        }
    }
}
