using System.Runtime.CompilerServices;
using BenchmarkDotNet.Configs;
using BenchmarkDotNet.Filters;
using BenchmarkDotNet.Jobs;
using jemalloc.Benchmarks.Infrastructure;
using jemalloc.Benchmarks.Suites;
using jemalloc.Benchmarks.Suites.Structures;
using jemalloc.Cli.Options;

namespace jemalloc.Cli.Commands;

/// <summary>The benchmark verbs: check the arguments and the memory, then run the suite.</summary>
public static class SuiteCommands
{
    private const long AbsurdRounds = 1_000_000;
    private const long AbsurdAllocations = 100_000_000;
    private const long AbsurdWidth = 100_000;

    /// <summary>The measured iterations of <c>hugearray</c> when none are asked for (each is one cold operation).</summary>
    public const int HugeArrayDefaultIterations = 5;

    /// <summary>Runs <c>jembench malloc</c>.</summary>
    /// <exception cref="CommandLineException">The arguments are wrong.</exception>
    /// <exception cref="InsufficientMemoryException">The run would not fit in memory.</exception>
    public static int Malloc(MallocOptions options, TextWriter output)
    {
        ArgumentNullException.ThrowIfNull(options);
        RunSettings settings = options.ToRunSettings();
        Type type = options.ResolveElementType("malloc");
        string[] categories = Operations("malloc", "--create, --fill or --fragment",
            (options.Create, Categories.Create), (options.Fill, Categories.Fill), (options.Fragment, Categories.Fragment));
        bool elementCounts = options.Create || options.Fill;
        if (elementCounts && options.Fragment)
        {
            throw new CommandLineException("malloc: --fragment takes rounds of its pattern as sizes, --create and --fill take element counts: run --fragment on its own.");
        }

        long[] sizes = Sizes(options.Sizes, settings,
            quick: elementCounts ? 100_000 : 2,
            normal: elementCounts ? 10_000_000 : 100);
        int elementSize = SizeOf(type);
        foreach (long size in sizes)
        {
            if (options.Fragment && !elementCounts)
            {
                RequireRange("malloc --fragment", "rounds", size, AbsurdRounds);
            }
            else
            {
                RequireRange("malloc", "element count", size, System.Array.MaxLength);
            }
        }

        long largest = elementCounts ? sizes.Max() * elementSize : 0;
        MemoryCheck.EnsureFits("malloc", new MemoryNeed(largest, largest, $"{type.Name}[{sizes.Max():N0}]"));
        return RunInProcess(settings, categories, sizes, output, typeof(MallocBenchmarks<>).MakeGenericType(type));
    }

    /// <summary>Runs <c>jembench array</c>: <see cref="SafeArray{T}"/> against managed arrays.</summary>
    /// <exception cref="CommandLineException">The arguments are wrong.</exception>
    /// <exception cref="InsufficientMemoryException">The run would not fit in memory.</exception>
    public static int Array(ArrayOptions options, TextWriter output) =>
        Structure("array", "SafeArray", options, output, typeof(SafeArrayBenchmarks<>), typeof(SafeArrayMathBenchmarks<>), huge: false);

    /// <summary>Runs <c>jembench buffer</c>: <see cref="FixedBuffer{T}"/> against managed arrays.</summary>
    /// <exception cref="CommandLineException">The arguments are wrong.</exception>
    /// <exception cref="InsufficientMemoryException">The run would not fit in memory.</exception>
    public static int Buffer(BufferOptions options, TextWriter output) =>
        Structure("buffer", "FixedBuffer", options, output, typeof(FixedBufferBenchmarks<>), typeof(FixedBufferMathBenchmarks<>), huge: false);

    /// <summary>Runs <c>jembench hugearray</c>: <see cref="HugeArray{T}"/> against the largest managed array.</summary>
    /// <exception cref="CommandLineException">The arguments are wrong.</exception>
    /// <exception cref="InsufficientMemoryException">The run would not fit in memory.</exception>
    public static int HugeArray(HugeArrayOptions options, TextWriter output) =>
        Structure("hugearray", "HugeArray", options, output, typeof(HugeArrayBenchmarks<>), typeof(HugeArrayMathBenchmarks<>), huge: true);

    /// <summary>Runs <c>jembench vector</c>: the Mandelbrot kernel.</summary>
    /// <exception cref="CommandLineException">The arguments are wrong.</exception>
    /// <exception cref="InsufficientMemoryException">The run would not fit in memory.</exception>
    public static int Vector(VectorOptions options, TextWriter output)
    {
        ArgumentNullException.ThrowIfNull(options);
        RunSettings settings = options.ToRunSettings();
        if (options.SinglePrecision == options.DoublePrecision)
        {
            throw new CommandLineException(options.SinglePrecision
                ? "vector: choose exactly one of -f and -d; both were given."
                : "vector: choose the precision: -f (float) or -d (double).");
        }

        Type type = options.SinglePrecision ? typeof(float) : typeof(double);
        long[] sizes = Sizes(options.Sizes, settings, quick: 64, normal: 1536);
        foreach (long size in sizes)
        {
            RequireRange("vector", "width", size, AbsurdWidth);
        }

        long pixels = sizes.Max() * Math.Max(1, sizes.Max() * 2 / 3);
        MemoryCheck.EnsureFits("vector", new MemoryNeed(pixels * sizeof(int), 2 * pixels * sizeof(int), $"a {sizes.Max():N0}-pixel-wide plot"));
        return RunInProcess(settings, [Categories.Mandelbrot], sizes, output, typeof(MandelbrotBenchmarks<>).MakeGenericType(type));
    }

    /// <summary>Runs <c>jembench alloc</c>: the single-thread suite, or with <c>--threads</c> the multi-thread one.</summary>
    /// <exception cref="CommandLineException">The arguments are wrong.</exception>
    /// <exception cref="InsufficientMemoryException">The run would not fit in memory.</exception>
    public static int Alloc(AllocOptions options, TextWriter output)
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentNullException.ThrowIfNull(output);
        RunSettings settings = options.ToRunSettings() with { ForceInProcess = options.InProcess };
        long[] sizes = Sizes(options.Sizes, settings, quick: 256, normal: 2048);
        foreach (long size in sizes)
        {
            RequireRange("alloc", "allocation count", size, AbsurdAllocations);
        }

        int[] threads = options.ThreadCounts();
        foreach (int count in threads)
        {
            RequireRange("alloc --threads", "thread count", count, WorkerTeam.MaxThreads);
        }

        Type suite = threads.Length > 0 ? typeof(AllocThreadsBenchmarks) : typeof(AllocBenchmarks);
        // Each thread of the multi-thread suite holds up to two rounds of its blocks (the next-thread ring).
        long blocksAlive = threads.Length > 0 ? sizes.Max() * 2 * threads.Max() : sizes.Max();
        MemoryCheck.EnsureFits("alloc", new MemoryNeed(blocksAlive * 4096, blocksAlive * 4096, $"{blocksAlive:N0} allocations of up to 4096 bytes"));
        // A missing mimalloc leaves its row out, said so; it is never measured as something else.
        bool mimalloc = Mimalloc.IsAvailable;
        if (!mimalloc)
        {
            output.WriteLine(Mimalloc.MissingMessage);
        }

        if (threads.Length > 0)
        {
            SuiteParameters.Threads = threads;
            DescribeThreads(threads, output);
        }

        IFilter rows = new SimpleFilter(b =>
            (mimalloc || b.Descriptor.WorkloadMethod.Name != nameof(AllocBenchmarks.MimallocMallocFree)) &&
            !(b.Parameters.Items.Any(p => p.Name == nameof(AllocThreadsBenchmarks.FreedOn) && p.Value is FreedOn.NextThread) &&
              b.Parameters.Items.Any(p => p.Name == nameof(AllocThreadsBenchmarks.Threads) && p.Value is 1)));
        if (settings.ForceInProcess)
        {
            if (settings.Conf is string inProcessConf)
            {
                JemConfiguration.Apply(inProcessConf);
            }

            SuiteParameters.Sizes = sizes;
            IConfig inProcess = ((ManualConfig)JemBenchConfig.Create(settings, [], JemBenchConfig.InProcessJob(settings))).AddFilter(rows);
            return Report(SuiteRunner.Run(inProcess, suite), output);
        }

        // jemalloc reads its options only when it loads: each configuration gets its own process.
        Job[] jobs = settings.Conf is string conf
            ? [JemBenchConfig.OutOfProcessJob(settings, "conf", conf)]
            :
            [
                JemBenchConfig.OutOfProcessJob(settings, "default-tcache", null),
                JemBenchConfig.OutOfProcessJob(settings, "tuned-tcache", AllocTuning.TunedThreadCache),
            ];
        settings = settings with { ArtifactsPath = settings.ArtifactsPath ?? Path.GetFullPath("BenchmarkDotNet.Artifacts") };
        OutOfProcess.EnterSourceTree(output);
        SuiteParameters.Sizes = sizes;
        return Report(SuiteRunner.Run(((ManualConfig)JemBenchConfig.Create(settings, [], jobs)).AddFilter(rows), suite), output);
    }

    /// <summary>Says what the thread counts mean on this machine: more threads than cores, and the rows a single thread cannot run.</summary>
    internal static void DescribeThreads(IReadOnlyCollection<int> threads, TextWriter output)
    {
        int cores = Environment.ProcessorCount;
        int[] oversubscribed = [.. threads.Where(count => count > cores)];
        output.WriteLine(oversubscribed.Length > 0
            ? $"jembench: this machine has {cores} logical cores: the {string.Join(", ", oversubscribed)}-thread rows run more threads than cores, which take turns (their Cores column says so)."
            : $"jembench: this machine has {cores} logical cores.");
        if (threads.Contains(1))
        {
            output.WriteLine("jembench: freeing on the next thread needs 2 threads or more: at 1 thread only the rows freed on the allocating thread run.");
        }
    }

    private static int Structure(string verb, string structure, StructureOptions options, TextWriter output, Type fillSuite, Type mathSuite, bool huge)
    {
        ArgumentNullException.ThrowIfNull(options);
        RunSettings settings = options.ToRunSettings();
        if (huge && !settings.Once && !settings.Quick && settings.TargetCount is null)
        {
            // Every operation on a huge array takes seconds: measure a few cold operations unless told otherwise.
            settings = settings with { ColdStart = true, TargetCount = HugeArrayDefaultIterations };
        }

        Type type = options.ResolveElementType(verb);
        string[] categories = Operations(verb, "--create, --fill or --math",
            (options.Create, Categories.Create), (options.Fill, Categories.Fill), (options.Math, Categories.Math));
        if (options.Math && type == typeof(Employee))
        {
            throw new CommandLineException($"{verb}: --math needs a numeric element type (-b, -h, -i, -l, -f or -d), not --udt.");
        }

        int elementSize = SizeOf(type);
        long[] sizes = Sizes(options.Sizes, settings, quick: 100_000, normal: huge ? System.Array.MaxLength + 1L : 10_000_000);
        foreach (long size in sizes)
        {
            RequireRange(verb, "element count", size, huge ? long.MaxValue / elementSize : System.Array.MaxLength);
        }

        long largest = sizes.Max();
        long managedElements = Math.Min(largest, System.Array.MaxLength);
        MemoryCheck.EnsureFits(verb, new MemoryNeed(largest * elementSize, managedElements * elementSize, $"a {structure}<{type.Name}> of {largest:N0} elements ({elementSize} bytes each)"));
        var suites = new List<Type>();
        if (options.Create || options.Fill)
        {
            suites.Add(fillSuite.MakeGenericType(type));
        }

        if (options.Math)
        {
            suites.Add(mathSuite.MakeGenericType(type));
        }

        int exit = RunInProcess(settings, categories, sizes, output, [.. suites]);
        if (options.Fill)
        {
            // The suites ran in this process: this is the choice their fills made.
            output.WriteLine($"Fill policy: {FillPolicy.Describe()}");
        }

        return exit;
    }

    /// <summary>The verb's operations as benchmark categories; at least one is required.</summary>
    /// <exception cref="CommandLineException">None was chosen.</exception>
    internal static string[] Operations(string verb, string choices, params (bool Chosen, string Category)[] operations)
    {
        string[] chosen = [.. operations.Where(o => o.Chosen).Select(o => o.Category)];
        if (chosen.Length == 0)
        {
            throw new CommandLineException($"{verb}: choose what to benchmark: {choices}.");
        }

        return chosen;
    }

    /// <summary>The sizes given, or the verb's default (smaller in quick mode).</summary>
    internal static long[] Sizes(IEnumerable<long> given, RunSettings settings, long quick, long normal)
    {
        long[] sizes = [.. given];
        return sizes.Length > 0 ? sizes : [settings.Quick ? quick : normal];
    }

    /// <summary>Refuses a size below 1 or above <paramref name="maximum"/>.</summary>
    /// <exception cref="CommandLineException">The size is out of range.</exception>
    internal static void RequireRange(string verb, string what, long size, long maximum)
    {
        if (size < 1 || size > maximum)
        {
            throw new CommandLineException($"{verb}: the {what} {size:N0} is out of range: it must be between 1 and {maximum:N0}.");
        }
    }

    /// <summary>The size in bytes of one element of <paramref name="type"/>.</summary>
    internal static int SizeOf(Type type) =>
        (int)typeof(Unsafe).GetMethod(nameof(Unsafe.SizeOf))!.MakeGenericMethod(type).Invoke(null, null)!;

    /// <summary>Applies the jemalloc configuration, then runs the suites in this process.</summary>
    internal static int RunInProcess(RunSettings settings, IReadOnlyCollection<string> categories, long[] sizes, TextWriter output, params Type[] suites)
    {
        if (settings.Conf is string conf)
        {
            JemConfiguration.Apply(conf);
        }

        SuiteParameters.Sizes = sizes;
        IConfig config = JemBenchConfig.Create(settings, categories, JemBenchConfig.InProcessJob(settings));
        return Report(SuiteRunner.Run(config, suites), output);
    }

    /// <summary>Prints the result checks and failures; the exit code.</summary>
    internal static int Report(SuiteOutcome outcome, TextWriter output)
    {
        int passed = outcome.Checks.Count(c => c.Passed);
        output.WriteLine();
        if (outcome.Succeeded)
        {
            // Every benchmark made at least one check (in this process or, for out-of-process jobs, in its own).
            output.WriteLine($"jembench: every benchmark ran; {passed} result check(s) passed.");
            return Program.ExitSuccess;
        }

        output.WriteLine($"jembench: FAILED: {outcome.Failures.Count} problem(s); {passed} result check(s) passed.");
        foreach (string failure in outcome.Failures)
        {
            output.WriteLine($"  {failure}");
        }

        return Program.ExitBenchmarkFailed;
    }
}
