using System.Reflection;
using CommandLine;
using CommandLine.Text;
using jemalloc.Cli.Commands;
using jemalloc.Cli.Options;

namespace jemalloc.Cli;

/// <summary>The <c>jembench</c> entry point: parses the verb and its options and runs it.</summary>
public static class Program
{
    /// <summary>Success.</summary>
    public const int ExitSuccess = 0;

    /// <summary>The command line is wrong.</summary>
    public const int ExitBadArguments = 1;

    /// <summary>A benchmark failed or gave a wrong result.</summary>
    public const int ExitBenchmarkFailed = 2;

    /// <summary>The run would not fit in this machine's memory.</summary>
    public const int ExitNotEnoughMemory = 3;

    /// <summary>Anything else went wrong (e.g. the native library is missing).</summary>
    public const int ExitError = 4;

    internal static readonly Type[] Verbs =
    [
        typeof(MallocOptions), typeof(ArrayOptions), typeof(BufferOptions), typeof(HugeArrayOptions),
        typeof(VectorOptions), typeof(AllocOptions), typeof(InfoOptions), typeof(MicroOptions),
        typeof(HugePagesOptions), typeof(ArenaOptions), typeof(RecordsOptions), typeof(IoOptions), typeof(ColumnarOptions),
        typeof(StringsOptions), typeof(CacheOptions),
    ];

    /// <summary>"jembench" and its version, from this assembly (not the process's entry assembly, which may be a test host).</summary>
    public static string Heading { get; } = new HeadingInfo("jembench",
        typeof(Program).Assembly.GetCustomAttribute<AssemblyInformationalVersionAttribute>()?.InformationalVersion ?? typeof(Program).Assembly.GetName().Version?.ToString());

    private static int Main(string[] args) => Run(args, Console.Out, Console.Error);

    /// <summary>Runs jembench with <paramref name="args"/>, writing help and messages to the given writers.</summary>
    /// <returns>The process exit code.</returns>
    public static int Run(string[] args, TextWriter output, TextWriter error)
    {
        ArgumentNullException.ThrowIfNull(args);
        ArgumentNullException.ThrowIfNull(output);
        ArgumentNullException.ThrowIfNull(error);
        ParserResult<object> parsed = Parse(args);
        if (parsed is NotParsed<object> notParsed)
        {
            return ReportParseErrors(notParsed, output, error);
        }

        try
        {
            if (parsed.Value is OptionsOnlyVerb optionsOnly)
            {
                optionsOnly.RejectStrayValues();
            }

            return parsed.Value switch
            {
                MallocOptions o => SuiteCommands.Malloc(o, output),
                ArrayOptions o => SuiteCommands.Array(o, output),
                BufferOptions o => SuiteCommands.Buffer(o, output),
                HugeArrayOptions o => SuiteCommands.HugeArray(o, output),
                VectorOptions o => SuiteCommands.Vector(o, output),
                AllocOptions o => SuiteCommands.Alloc(o, output),
                InfoOptions o => InfoCommand.Run(o, output),
                HugePagesOptions o => HugePagesCommand.Run(o, output),
                ArenaOptions o => ArenaCommand.Run(o, output),
                MicroOptions o => MicroCommand.Run(o, output),
                RecordsOptions o => RecordsCommand.Run(o, output, error),
                IoOptions o => IoCommand.Run(o, output, error),
                ColumnarOptions o => ColumnarCommand.Run(o, output, error),
                StringsOptions o => StringsCommand.Run(o, output, error),
                CacheOptions o => CacheCommand.Run(o, output, error),
                _ => throw new CommandLineException($"Unknown verb {parsed.Value.GetType().Name}."),
            };
        }
        catch (CommandLineException e)
        {
            error.WriteLine($"jembench: {e.Message}");
            error.WriteLine("Run 'jembench --help' or 'jembench <verb> --help' for the options.");
            return ExitBadArguments;
        }
        catch (jemalloc.Benchmarks.Infrastructure.BenchmarkVerificationException e)
        {
            error.WriteLine($"jembench: WRONG RESULT: {e.Message}");
            return ExitBenchmarkFailed;
        }
        catch (InsufficientMemoryException e)
        {
            error.WriteLine(e.Message);
            return ExitNotEnoughMemory;
        }
        catch (JemLibraryException e)
        {
            error.WriteLine($"jembench: {e.Message}");
            return ExitError;
        }
        catch (InvalidOperationException e)
        {
            error.WriteLine($"jembench: {e.Message}");
            return ExitError;
        }
    }

    /// <summary>Parses <paramref name="args"/> into one of the verbs' option classes, without running anything.</summary>
    public static ParserResult<object> Parse(string[] args)
    {
        using var parser = new Parser(settings =>
        {
            settings.HelpWriter = null;
            settings.AutoHelp = true;
            settings.AutoVersion = true;
            settings.CaseSensitive = true;
        });
        return parser.ParseArguments(args, Verbs);
    }

    private static int ReportParseErrors(NotParsed<object> result, TextWriter output, TextWriter error)
    {
        bool askedForHelp = result.Errors.All(e => e is HelpRequestedError or HelpVerbRequestedError or VersionRequestedError or NoVerbSelectedError);
        if (result.Errors.Any(e => e is VersionRequestedError))
        {
            output.WriteLine(Heading);
            return ExitSuccess;
        }

        HelpText help = HelpText.AutoBuild(result, h =>
        {
            h.Heading = Heading;
            h.AdditionalNewLineAfterOption = false;
            h.AddDashesToOption = true;
            h.Copyright = "Benchmarks jemalloc.NET's native data structures against managed arrays (BenchmarkDotNet).";
            // Asking for help (or giving no verb) is not an error: show the help without an error list.
            return askedForHelp ? h : HelpText.DefaultParsingErrorsHandler(result, h);
        }, e => e, verbsIndex: true);
        if (askedForHelp)
        {
            output.WriteLine(help);
            return ExitSuccess;
        }

        error.WriteLine(help);
        return ExitBadArguments;
    }
}
