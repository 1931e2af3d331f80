using System.Globalization;

namespace jemalloc.PerfCompare;

/// <summary>The driver's command line (<c>./build.sh compare-builds</c> passes the two builds and their labels; the rest is the user's).</summary>
internal sealed class CompareOptions
{
    internal const string Usage = """
        usage: jemalloc.PerfCompare --old ASSEMBLY --new ASSEMBLY [options]
               (normally started by ./build.sh compare-builds OLD-REV [NEW-REV] [options])
          --old, --new PATH      jemalloc.PerfCompare.dll built against the old / the new library
          --old-label, --new-label TEXT  what each build is (a revision), for the report
          --rounds N             measured rounds, each running every measurement on both sides (default 50;
                                 a multiple of twice --processes runs each side first equally often in every pair)
          --sample-ms N          the CPU time of one measurement on one side in a round (default 100)
          --warmup-ms N          warm-up per measurement and worker process before the rounds (default 200)
          --processes N          worker processes per side, taking turns by round (default 5)
          --clock cpu|wall       time the worker thread's CPU time (default; Linux) or the wall clock
          --tolerance PERCENT    how much slower new may be (default 3)
          --only NAME,NAME       only these measurements: fixedbuffer, safearray-sum, safearray-write, pool, writer, control
          --help                 this text
        """;

    internal string OldAssembly { get; private init; } = "";

    internal string NewAssembly { get; private init; } = "";

    internal string OldLabel { get; private init; } = "";

    internal string NewLabel { get; private init; } = "";

    internal int Rounds { get; private init; } = 50;

    internal int SampleMilliseconds { get; private init; } = 100;

    internal int WarmupMilliseconds { get; private init; } = 200;

    internal int Processes { get; private init; } = 5;

    /// <summary>The tolerance as a fraction: 0.03 for 3%.</summary>
    internal double Tolerance { get; private init; } = 0.03;

    internal IReadOnlyList<Measurement> Measurements { get; private init; } = Measurement.All;

    /// <summary>"cpu" (the worker thread's CPU time, where there is one) or "wall".</summary>
    internal string Clock { get; private init; } = "cpu";

    internal bool Help { get; private init; }

    /// <summary>Reads <paramref name="args"/>.</summary>
    /// <exception cref="UsageException">An option is unknown, lacks its value, or its value is out of range; or a build is missing.</exception>
    internal static CompareOptions Parse(IReadOnlyList<string> args)
    {
        string? oldAssembly = null, newAssembly = null, oldLabel = null, newLabel = null;
        int rounds = 50, sample = 100, warmup = 200, processes = 5;
        double tolerance = 3;
        string clock = "cpu";
        IReadOnlyList<Measurement> measurements = Measurement.All;
        for (int i = 0; i < args.Count; i++)
        {
            string option = args[i];
            if (option is "--help" or "-h")
            {
                return new CompareOptions { Help = true };
            }

            string value = i + 1 < args.Count ? args[++i] : throw new UsageException($"{option} needs a value.");
            switch (option)
            {
                case "--old": oldAssembly = value; break;
                case "--new": newAssembly = value; break;
                case "--old-label": oldLabel = value; break;
                case "--new-label": newLabel = value; break;
                case "--rounds": rounds = Integer(option, value, 3, 1000); break;
                case "--sample-ms": sample = Integer(option, value, 10, 60_000); break;
                case "--warmup-ms": warmup = Integer(option, value, 0, 600_000); break;
                case "--processes": processes = Integer(option, value, 1, 16); break;
                case "--tolerance": tolerance = Percent(option, value); break;
                case "--only": measurements = Pick(value); break;
                case "--clock": clock = value is "cpu" or "wall" ? value : throw new UsageException($"--clock takes cpu or wall, not '{value}'."); break;
                default: throw new UsageException($"Unknown option '{option}'.");
            }
        }

        if (rounds < processes)
        {
            throw new UsageException($"--rounds ({rounds}) must give every one of the {processes} pairs of processes a round at least.");
        }

        return new CompareOptions
        {
            OldAssembly = oldAssembly ?? throw new UsageException("--old (the old build) is missing."),
            NewAssembly = newAssembly ?? throw new UsageException("--new (the new build) is missing."),
            OldLabel = oldLabel ?? oldAssembly,
            NewLabel = newLabel ?? newAssembly,
            Rounds = rounds,
            SampleMilliseconds = sample,
            WarmupMilliseconds = warmup,
            Processes = processes,
            Tolerance = tolerance / 100,
            Measurements = measurements,
            Clock = clock,
        };
    }

    private static int Integer(string option, string value, int min, int max) =>
        int.TryParse(value, NumberStyles.None, CultureInfo.InvariantCulture, out int number) && number >= min && number <= max
            ? number
            : throw new UsageException($"{option} takes a whole number from {min} to {max}, not '{value}'.");

    private static double Percent(string option, string value) =>
        double.TryParse(value.TrimEnd('%'), NumberStyles.AllowDecimalPoint, CultureInfo.InvariantCulture, out double percent) && percent is >= 0 and <= 100
            ? percent
            : throw new UsageException($"{option} takes a percentage from 0 to 100, not '{value}'.");

    private static Measurement[] Pick(string names)
    {
        Measurement[] picked = [.. names.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries)
            .Select(name => Measurement.Find(name) ?? throw new UsageException(
                $"--only: no measurement is named '{name}' (there are {string.Join(", ", Measurement.All.Select(m => m.Name))})."))
            .Distinct()];
        return picked.Length > 0 ? picked : throw new UsageException("--only names no measurement.");
    }
}
