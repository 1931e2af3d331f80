using System.Globalization;

namespace jemalloc.Tests.ChildProcess;

/// <summary>
/// Runs one scenario and prints its observations, one per line, for the test that started it.
/// Exit code 0: the scenario ran; 2: bad arguments.
/// </summary>
internal static class Program
{
    private static int Main(string[] args)
    {
        if (MallctlScenarios.Handles(args.FirstOrDefault()))
        {
            return MallctlScenarios.Run(args[0]);
        }

        switch (args.FirstOrDefault())
        {
            case "load":
                return Load();
            case "load-from" when args.Length == 2:
                Jem.SetNativeLibraryPath(args[1]);
                return Load();
            case "conf" when args.Length == 2:
                return Configure(args[1]);
            case "messages":
                return Messages();
            case "report":
                return Report();
            case "messages-before-load":
                return MessagesBeforeLoad();
            case "too-big" when args.Length is 3 or 4:
                return TooBigScenario.Run(args[1], long.Parse(args[2], CultureInfo.InvariantCulture), args.Length == 4 ? long.Parse(args[3], CultureInfo.InvariantCulture) : null);
            case "arena-cycles" when args.Length == 3:
                return ArenaCycleScenario.Run(args[1], int.Parse(args[2], CultureInfo.InvariantCulture));
            case "adversarial" when args.Length == 2:
                return Adversarial.Scenarios.Run(args[1]);
            default:
                Console.Error.WriteLine("usage: load | load-from <path> | conf <malloc_conf> | report | messages | messages-before-load | too-big <structure> <length> [<fake MemAvailable bytes>] | arena-cycles <arena|cache|cache-lease> <cycles> | adversarial <scenario>");
                return 2;
        }
    }

    /// <summary>Allocates once; prints where the library came from or the loading error.</summary>
    private static unsafe int Load()
    {
        try
        {
            void* memory = Jem.Malloc(16);
            Jem.Free(memory);
            Console.WriteLine($"LOADED {Jem.NativeLibraryPath ?? "(host probing)"}");
        }
        catch (JemLibraryException exception)
        {
            Console.WriteLine($"{nameof(JemLibraryException)} {exception.Message}");
        }

        return 0;
    }

    /// <summary>Applies options before the library loads, then reports what jemalloc made of them.</summary>
    private static int Configure(string conf)
    {
        Jem.Init(conf);
        Console.WriteLine($"LOADED_BEFORE_CALL {Jem.IsLoaded}");
        foreach (JemOptionCheck option in Jem.GetConfigurationReport().Options)
        {
            Console.WriteLine($"OPTION {option.Key}|{option.Status}|{option.EffectiveValue}");
        }

        try
        {
            Jem.Init(conf);
            Console.WriteLine("INIT_AFTER_LOAD accepted");
        }
        catch (InvalidOperationException exception)
        {
            Console.WriteLine($"INIT_AFTER_LOAD {exception.GetType().Name} {exception.Message}");
        }

        return 0;
    }

    /// <summary>Sets a writer before the library is loaded: the hook must be installed when it loads.</summary>
    private static int MessagesBeforeLoad()
    {
        using var writer = new StringWriter();
        Jem.MessageWriter = writer;
        Console.WriteLine($"LOADED_AFTER_SETTING_WRITER {Jem.IsLoaded}");
        Jem.PrintStats("J");
        Console.WriteLine($"CAPTURED_BEGIN{Environment.NewLine}{writer}{Environment.NewLine}CAPTURED_END");
        return 0;
    }

    /// <summary>Reports the options jemalloc was started with, without calling Init.</summary>
    private static int Report()
    {
        JemConfigurationReport report = Jem.GetConfigurationReport();
        Console.WriteLine($"REQUESTED {report.Configuration}");
        foreach (JemOptionCheck option in report.Options)
        {
            Console.WriteLine($"OPTION {option.Key}|{option.Status}|{option.EffectiveValue}");
        }

        return 0;
    }

    /// <summary>
    /// Prints statistics through jemalloc's message function three times: with nobody listening
    /// (standard error), with a writer set (captured), and after the writer is removed (standard error again).
    /// </summary>
    private static int Messages()
    {
        Jem.PrintStats("J");
        Console.Error.Flush();
        using var writer = new StringWriter();
        Jem.MessageWriter = writer;
        Jem.PrintStats("J");
        Jem.MessageWriter = null;
        Console.WriteLine($"CAPTURED_BEGIN{Environment.NewLine}{writer}{Environment.NewLine}CAPTURED_END");
        Console.Out.Flush();
        Jem.PrintStats("J");
        return 0;
    }
}
