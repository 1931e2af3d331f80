using System.Globalization;
using System.Text.RegularExpressions;
using jemalloc.Benchmarks.IO;
using jemalloc.Cli.Options;

namespace jemalloc.Cli.Commands;

/// <summary>
/// <c>jembench io</c>: the JSON suite (<see cref="JsonWriteHarness"/>) and the pipe suite
/// (<see cref="PipePumpHarness"/>), each side by default in a process of its own so each reports its
/// own peak RSS, GC counts and allocations; prints the tables and the goals' ratios, and fails with
/// exit code 2 if any side's bytes differ from the reference.
/// </summary>
public static partial class IoCommand
{
    private const string JsonPrefix = "io-json-result: ";
    private const string PipePrefix = "io-pipe-result: ";
    private const double MiB = 1024.0 * 1024.0;

    /// <summary>Runs the verb.</summary>
    /// <exception cref="CommandLineException">An option is out of range or names an unknown side.</exception>
    /// <exception cref="InsufficientMemoryException">The JSON document would not fit in this machine's memory.</exception>
    public static int Run(IoOptions options, TextWriter output, TextWriter error)
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentNullException.ThrowIfNull(output);
        ArgumentNullException.ThrowIfNull(error);
        _ = SuiteCommands.Operations("io", "--json or --pipe", (options.Json, "json"), (options.Pipe, "pipe"));
        long jsonSize = ParseSize("--json-size", options.JsonSize);
        // So that the memory check's multiples of it cannot overflow.
        SuiteCommands.RequireRange("io", "--json-size", jsonSize, long.MaxValue / 4);
        long pipeSize = ParseSize("--pipe-size", options.PipeSize);
        long initialCapacity = ParseSize("--initial-capacity", options.InitialCapacity);
        JsonWriterSide[] writers = ParseSides(CommaList.Split(options.Writers), "--writers", WriterNames);
        PipePoolSide[] pools = ParseSides(CommaList.Split(options.Pools), "--pools", PoolNames);
        if (options.Corrupt is not null && !WriterNames.ContainsKey(options.Corrupt) && !PoolNames.ContainsKey(options.Corrupt))
        {
            throw new CommandLineException($"io: --corrupt names no side: '{options.Corrupt}'.");
        }

        if (options.Json && !options.Presized && initialCapacity > Array.MaxLength && writers.Any(w => JsonWriteHarness.IsManaged(w) && JsonWriteHarness.CanHold(w, jsonSize)))
        {
            throw new CommandLineException($"io: --initial-capacity {initialCapacity:N0} is more than a managed writer's array can hold ({Array.MaxLength:N0} bytes).");
        }

        if (options.Rounds < 1)
        {
            throw new CommandLineException($"io: --rounds must be at least 1; got {options.Rounds}.");
        }

        if (options.Child)
        {
            return RunChild(options, jsonSize, pipeSize, initialCapacity, writers, pools, output);
        }

        if (options.Json)
        {
            bool managed = writers.Any(w => JsonWriteHarness.IsManaged(w) && JsonWriteHarness.CanHold(w, jsonSize));
            // A doubling writer's capacity reaches up to twice the document, and the blocks it grew out of stay
            // resident too: the managed ones until the GC frees them, the native ones until jemalloc's decay
            // returns them (measured: over twice the document at its peak).
            MemoryCheck.EnsureFits("io", new MemoryNeed(
                writers.Any(w => !JsonWriteHarness.IsManaged(w)) ? 3 * jsonSize : 0, managed ? 3 * jsonSize : 0, $"a JSON document of {jsonSize:N0} bytes"));
        }

        IReadOnlyList<string>? jembench = options.InProcess ? null : SideProcess.JembenchCommand();
        if (!options.InProcess && jembench is null)
        {
            output.WriteLine("io: this process is not jembench, so the sides run in this process (peak RSS is then cumulative).");
        }

        output.WriteLine($"io: GC {(System.Runtime.GCSettings.IsServerGC ? "server" : "workstation")}, concurrent {(AppContext.TryGetSwitch("System.GC.Concurrent", out bool concurrent) ? concurrent : "default")}; {(jembench is null ? "every side in this process" : "each side in its own process")}.");
        int exit = Program.ExitSuccess;
        if (options.Json)
        {
            exit = Math.Max(exit, RunJson(jembench, writers, jsonSize, options.Presized ? null : initialCapacity, options.Rounds, options.Corrupt, output, error));
        }

        if (options.Pipe)
        {
            exit = Math.Max(exit, RunPipe(jembench, pools, pipeSize, options.Rounds, options.Corrupt, output, error));
        }

        return exit;
    }

    /// <summary>A size in bytes: a whole number, optionally with a unit (KB, MB, GB, TB in powers of 1000; KiB, MiB, GiB, TiB in powers of 1024).</summary>
    /// <exception cref="CommandLineException">The text is not a size, or the size is below 1 or overflows.</exception>
    public static long ParseSize(string option, string text, string verb = "io")
    {
        ArgumentNullException.ThrowIfNull(option);
        Match match = SizePattern().Match(text ?? "");
        if (!match.Success)
        {
            throw new CommandLineException($"{verb}: {option} '{text}' is not a size: give bytes, or a number with KB, MB, GB, TB, KiB, MiB, GiB or TiB (e.g. 100MB).");
        }

        long unit = match.Groups[2].Value.ToUpperInvariant() switch
        {
            "" or "B" => 1,
            "KB" => 1000,
            "MB" => 1000_000,
            "GB" => 1000_000_000,
            "TB" => 1000_000_000_000,
            "KIB" => 1L << 10,
            "MIB" => 1L << 20,
            "GIB" => 1L << 30,
            _ => 1L << 40,
        };
        if (!long.TryParse(match.Groups[1].Value, NumberStyles.None, CultureInfo.InvariantCulture, out long number) || number > long.MaxValue / unit)
        {
            throw new CommandLineException($"{verb}: {option} '{text}' is too large.");
        }

        if (number < 1)
        {
            throw new CommandLineException($"{verb}: {option} must be at least 1 byte; got '{text}'.");
        }

        return number * unit;
    }

    private static readonly Dictionary<string, JsonWriterSide> WriterNames = new(StringComparer.Ordinal)
    {
        ["native"] = JsonWriterSide.Native,
        ["array"] = JsonWriterSide.Array,
        ["arraypool"] = JsonWriterSide.ArrayPool,
        ["limit"] = JsonWriterSide.Limit,
    };

    private static readonly Dictionary<string, PipePoolSide> PoolNames = new(StringComparer.Ordinal)
    {
        ["jem"] = PipePoolSide.Jem,
        ["shared"] = PipePoolSide.Shared,
    };

    private static string Name(JsonWriterSide side) => WriterNames.First(p => p.Value == side).Key;

    private static string Name(PipePoolSide side) => PoolNames.First(p => p.Value == side).Key;

    private static string Describe(JsonWriterSide side) => side switch
    {
        JsonWriterSide.Native => "native: NativeBufferWriter<byte>",
        JsonWriterSide.Array => "array: ArrayBufferWriter<byte>",
        JsonWriterSide.ArrayPool => "arraypool: ArrayPoolBufferWriter<byte>",
        _ => "limit: the encoding alone (NativeBufferWriter<byte> presized, paged in first)",
    };

    private static string Describe(PipePoolSide side) => side == PipePoolSide.Jem ? "jem: JemMemoryPool" : "shared: MemoryPool<byte>.Shared (default)";

    private static T[] ParseSides<T>(string[] given, string option, Dictionary<string, T> known)
        where T : struct, Enum
    {
        if (given.Length == 0)
        {
            return [.. known.Values];
        }

        var sides = new List<T>();
        foreach (string name in given)
        {
            if (!known.TryGetValue(name, out T side))
            {
                throw new CommandLineException($"io: unknown side '{name}' in {option}; the sides are {string.Join(", ", known.Keys)}.");
            }

            if (!sides.Contains(side))
            {
                sides.Add(side);
            }
        }

        return [.. sides];
    }

    private static int RunChild(IoOptions options, long jsonSize, long pipeSize, long initialCapacity, JsonWriterSide[] writers, PipePoolSide[] pools, TextWriter output)
    {
        if (options.Json == options.Pipe || (options.Json ? writers.Length : pools.Length) != 1)
        {
            throw new CommandLineException("io: a --child runs one suite (--json or --pipe) and one side (--writers or --pools).");
        }

        if (options.Json)
        {
            SideProcess.WriteResult(output, JsonPrefix, JsonWriteHarness.Run(writers[0], jsonSize, initialCapacity, options.Corrupt == Name(writers[0])));
        }
        else
        {
            SideProcess.WriteResult(output, PipePrefix, PipePumpHarness.Run(pools[0], pipeSize, options.Corrupt == Name(pools[0])));
        }

        return Program.ExitSuccess;
    }

    private static int RunJson(IReadOnlyList<string>? jembench, JsonWriterSide[] writers, long jsonSize, long? initialCapacity, int rounds, string? corrupt, TextWriter output, TextWriter error)
    {
        JsonWriterSide[] cannotHold = [.. writers.Where(w => !JsonWriteHarness.CanHold(w, jsonSize))];
        foreach (JsonWriterSide side in cannotHold)
        {
            output.WriteLine($"io json: {Name(side)} cannot hold {jsonSize:N0} bytes: {CannotHoldReason(side)}. Not run.");
        }

        if (cannotHold.Length == writers.Length)
        {
            output.WriteLine("io json: no writer chosen can hold the document; add --writers native to write it.");
            return Program.ExitSuccess;
        }

        var reference = System.Diagnostics.Stopwatch.StartNew();
        (long length, string sha256) = JsonDocumentContent.Reference(jsonSize);
        long initial = initialCapacity ?? length + JsonWriteHarness.Slack;
        output.WriteLine($"io json: Utf8JsonWriter writes {length:N0} bytes (asked {jsonSize:N0}); reference SHA-256 {sha256[..16]}... ({reference.Elapsed.TotalSeconds:F1} s, written into a hash only). " +
            $"Every writer starts at {initial:N0} bytes{(initialCapacity is null ? " (--presized: the whole document, so no growth)" : " (--initial-capacity)")}" +
            $"{(writers.Contains(JsonWriterSide.Limit) ? "; the limit writes into a block of the whole document, paged in before it is timed" : string.Empty)}.");
        var results = new List<JsonWriteResult>();
        bool failed = false;
        for (int round = 1; round <= rounds; round++)
        {
            var times = new List<string>();
            foreach (JsonWriterSide side in writers.Except(cannotHold))
            {
                // Presized past what a managed array holds (a document just under a writer's limit): as much as it holds.
                long start = Math.Min(initial, JsonWriteHarness.IsManaged(side) ? Array.MaxLength : long.MaxValue);
                JsonWriteResult? result = jembench is null
                    ? JsonWriteHarness.Run(side, jsonSize, start, corrupt == Name(side))
                    : SideProcess.Run<JsonWriteResult>(jembench, JsonChildArguments(side, jsonSize, start, corrupt), JsonPrefix, $"io json: the {Name(side)}", error);
                if (result is null)
                {
                    failed = true;
                    continue;
                }

                results.Add(result);
                times.Add(string.Create(CultureInfo.InvariantCulture, $"{Name(side)} {result.Seconds:F2} s"));
            }

            output.WriteLine($"io json: round {round} of {rounds}: {string.Join(", ", times)}.");
        }

        JsonWriteResult[] all = [.. results];
        results = [.. all.GroupBy(r => r.Side).Select(g => g.MinBy(r => r.Seconds)!)];

        output.WriteLine();
        output.WriteLine($"Best of {rounds} round(s) per writer (the rounds alternate the writers, so load on a shared machine hits them alike):");
        output.WriteLine("| Writer | Bytes | Time (s) | MB/s | Managed allocated (MiB) | GCs 0/1/2 | Page faults | Peak RSS (MiB) | SHA-256 |");
        output.WriteLine("|---|---:|---:|---:|---:|---:|---:|---:|---|");
        foreach (JsonWriteResult r in results)
        {
            output.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"| {Describe(r.Side)} | {r.Bytes:N0} | {r.Seconds:F2} | {r.Bytes / 1e6 / r.Seconds:F0} | {r.AllocatedBytes / MiB:F1} | {r.Gen0}/{r.Gen1}/{r.Gen2} | {Faults(r.PageFaults)} | {Rss(r.PeakRssBytes)} | {r.Sha256[..16]}... |"));
        }

        foreach (JsonWriterSide side in cannotHold)
        {
            output.WriteLine($"| {Describe(side)} | cannot hold | - | - | - | - | - | - | - |");
        }

        JsonWriteResult[] wrong = [.. all.Where(r => r.Bytes != length || r.Sha256 != sha256)];
        if (wrong.Length > 0)
        {
            error.WriteLine("io json: WRONG RESULT: bytes differ from the reference document: " +
                string.Join(", ", wrong.Select(r => $"{Name(r.Side)} wrote {r.Bytes:N0} bytes, SHA-256 {r.Sha256[..16]}...")));
            return Program.ExitBenchmarkFailed;
        }

        if (failed)
        {
            return Program.ExitBenchmarkFailed;
        }

        output.WriteLine($"io json: results checked: every writer's {length:N0} bytes have the reference's length and SHA-256.");
        JsonWriteResult? native = results.Find(r => r.Side == JsonWriterSide.Native);
        if (native is null)
        {
            return Program.ExitSuccess;
        }

        output.WriteLine("Goals (native against the others, this run; the machine may be shared and loaded: compare ratios within one run):");
        foreach (JsonWriteResult other in results.Where(r => r.Side is not (JsonWriterSide.Native or JsonWriterSide.Limit)))
        {
            double speedup = other.Seconds / native.Seconds;
            string perRound = PerRound(all.Where(r => r.Side == JsonWriterSide.Native).Select(r => r.Seconds), all.Where(r => r.Side == other.Side).Select(r => r.Seconds));
            string goal = other.Side == JsonWriterSide.Array ? $"(goal >= 1.50x): {(speedup >= 1.5 ? "met" : "NOT met")}" : "(no goal)";
            output.WriteLine(string.Create(CultureInfo.InvariantCulture, $"  time vs {Name(other.Side)}: {speedup:F2}x faster, best against best {goal} (round by round: {perRound})"));
        }

        if (cannotHold.Length > 0)
        {
            output.WriteLine($"  {length:N0} bytes: the native writer held them; {string.Join(" and ", cannotHold.Select(Name))} cannot: met");
        }

        JsonWriteResult? limit = results.Find(r => r.Side == JsonWriterSide.Limit);
        if (limit is not null)
        {
            // What no writer can beat: every side runs the same encoder over the same bytes.
            JsonWriteResult? array = results.Find(r => r.Side == JsonWriterSide.Array);
            string most = array is null ? string.Empty : string.Create(CultureInfo.InvariantCulture, $"; so no writer can be more than {array.Seconds / limit.Seconds:F2}x faster than array here");
            output.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"  machine limit: the encoding alone takes {limit.Seconds:F2} s (best round); native takes {native.Seconds / limit.Seconds:F2}x that{most}"));
        }

        return Program.ExitSuccess;
    }

    private static string CannotHoldReason(JsonWriterSide side) => side == JsonWriterSide.Array
        ? $"it writes into one .NET array, at most {Array.MaxLength:N0} bytes"
        : $"it grows its array in powers of two, to at most {JsonWriteHarness.MaxBytes(side):N0} bytes (the next power is past a .NET array's limit)";

    private static List<string> JsonChildArguments(JsonWriterSide side, long jsonSize, long initial, string? corrupt)
    {
        var arguments = new List<string>
        {
            "io", "--child", "--json", "--writers", Name(side),
            "--json-size", jsonSize.ToString(CultureInfo.InvariantCulture),
            "--initial-capacity", initial.ToString(CultureInfo.InvariantCulture),
        };
        if (corrupt is not null)
        {
            arguments.Add("--corrupt");
            arguments.Add(corrupt);
        }

        return arguments;
    }

    private static int RunPipe(IReadOnlyList<string>? jembench, PipePoolSide[] pools, long pipeSize, int rounds, string? corrupt, TextWriter output, TextWriter error)
    {
        ulong expected = PipeStreamPattern.Checksum(pipeSize);
        output.WriteLine($"io pipe: {pipeSize:N0} bytes in segments of {PipeStreamPattern.MinSegment:N0} to {PipeStreamPattern.MaxSegment:N0} bytes (a fixed sequence), one flush each; " +
            $"writer pauses at {PipePumpHarness.PauseWriterThreshold:N0} unread bytes and resumes below {PipePumpHarness.ResumeWriterThreshold:N0}, minimum segment {PipePumpHarness.MinimumSegmentSize:N0}, on both sides; every byte read is checked against the stream.");
        var results = new List<PipePumpResult>();
        bool failed = false;
        for (int round = 1; round <= rounds; round++)
        {
            var times = new List<string>();
            foreach (PipePoolSide side in pools)
            {
                PipePumpResult? result = jembench is null
                    ? PipePumpHarness.Run(side, pipeSize, corrupt == Name(side))
                    : SideProcess.Run<PipePumpResult>(jembench, PipeChildArguments(side, pipeSize, corrupt), PipePrefix, $"io pipe: the {Name(side)}", error);
                if (result is null)
                {
                    failed = true;
                    continue;
                }

                results.Add(result);
                times.Add(string.Create(CultureInfo.InvariantCulture, $"{Name(side)} {result.Seconds:F2} s"));
            }

            output.WriteLine($"io pipe: round {round} of {rounds}: {string.Join(", ", times)}.");
        }

        PipePumpResult[] all = [.. results];
        results = [.. all.GroupBy(r => r.Side).Select(g => g.MinBy(r => r.Seconds)!)];

        output.WriteLine();
        output.WriteLine($"Best of {rounds} round(s) per pool (the rounds alternate the pools, so load on a shared machine hits them alike):");
        output.WriteLine("| Pool | Bytes | Segments | Time (s) | GB/s | Managed allocated (MiB) | GCs 0/1/2 | Page faults | Peak RSS (MiB) | Blocks rented | XxHash3 |");
        output.WriteLine("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|");
        foreach (PipePumpResult r in results)
        {
            output.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"| {Describe(r.Side)} | {r.Bytes:N0} | {r.Segments:N0} | {r.Seconds:F2} | {r.Bytes / 1e9 / r.Seconds:F2} | {r.AllocatedBytes / MiB:F1} | {r.Gen0}/{r.Gen1}/{r.Gen2} | {Faults(r.PageFaults)} | {Rss(r.PeakRssBytes)} | {(r.Rents < 0 ? "n/a" : r.Rents.ToString("N0", CultureInfo.InvariantCulture))} | {r.Checksum:X16} |"));
        }

        PipePumpResult[] wrong = [.. all.Where(r => r.Bytes != pipeSize || r.Checksum != expected)];
        if (wrong.Length > 0)
        {
            error.WriteLine($"io pipe: WRONG RESULT: expected {pipeSize:N0} bytes with XxHash3 {expected:X16}; " +
                string.Join(", ", wrong.Select(r => $"{Name(r.Side)} read {r.Bytes:N0} bytes, {r.Checksum:X16}")));
            return Program.ExitBenchmarkFailed;
        }

        if (failed)
        {
            return Program.ExitBenchmarkFailed;
        }

        output.WriteLine($"io pipe: results checked: every byte read equals the byte written; XxHash3 {expected:X16} on every side.");
        PipePumpResult? jem = results.Find(r => r.Side == PipePoolSide.Jem);
        PipePumpResult? shared = results.Find(r => r.Side == PipePoolSide.Shared);
        if (jem is null || shared is null)
        {
            return Program.ExitSuccess;
        }

        output.WriteLine("Goals (jem against shared, this run; the machine may be shared and loaded: compare ratios within one run):");
        double throughput = shared.Seconds / jem.Seconds;
        string perRound = PerRound(all.Where(r => r.Side == PipePoolSide.Jem).Select(r => r.Seconds), all.Where(r => r.Side == PipePoolSide.Shared).Select(r => r.Seconds));
        output.WriteLine(string.Create(CultureInfo.InvariantCulture, $"  throughput vs shared: {throughput:F2}x, best against best (goal >= 1.00x): {(throughput >= 1.0 ? "met" : "NOT met")} (round by round: {perRound})"));
        int jemYoung = jem.Gen0 + jem.Gen1;
        int sharedYoung = shared.Gen0 + shared.Gen1;
        string collections = (jemYoung, sharedYoung) switch
        {
            (0, 0) => "neither side collected: no reduction to measure: NOT met",
            (0, _) => $"jem 0, shared {sharedYoung}: met",
            (_, 0) => $"jem {jemYoung}, shared 0: more, not fewer (goal >= 10x fewer): NOT met",
            _ => string.Create(CultureInfo.InvariantCulture, $"{(double)sharedYoung / jemYoung:F2}x fewer (jem {jemYoung}, shared {sharedYoung}) (goal >= 10x): {(sharedYoung >= 10 * jemYoung ? "met" : "NOT met")}"),
        };
        output.WriteLine($"  Gen0+Gen1 collections vs shared: {collections}");
        return Program.ExitSuccess;
    }

    private static List<string> PipeChildArguments(PipePoolSide side, long pipeSize, string? corrupt)
    {
        var arguments = new List<string>
        {
            "io", "--child", "--pipe", "--pools", Name(side),
            "--pipe-size", pipeSize.ToString(CultureInfo.InvariantCulture),
        };
        if (corrupt is not null)
        {
            arguments.Add("--corrupt");
            arguments.Add(corrupt);
        }

        return arguments;
    }

    // Each round's ratio of the other side's time to this side's: how much the load moved the ratio.
    private static string PerRound(IEnumerable<double> mine, IEnumerable<double> other) =>
        string.Join(", ", mine.Zip(other, (m, o) => (o / m).ToString("F2", CultureInfo.InvariantCulture) + "x"));

    private static string Faults(long faults) => faults < 0 ? "n/a" : faults.ToString("N0", CultureInfo.InvariantCulture);

    private static string Rss(long bytes) => bytes < 0 ? "n/a" : (bytes / MiB).ToString("F0", CultureInfo.InvariantCulture);

    [GeneratedRegex(@"^\s*(\d+)\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)?\s*$", RegexOptions.IgnoreCase | RegexOptions.CultureInvariant)]
    private static partial Regex SizePattern();
}
