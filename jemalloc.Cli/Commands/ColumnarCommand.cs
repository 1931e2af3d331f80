using System.Diagnostics;
using System.Globalization;
using jemalloc.Cli.Columnar;
using jemalloc.Cli.Options;
using ParquetSharp;

namespace jemalloc.Cli.Commands;

/// <summary>
/// <c>jembench columnar</c>: writes the columns once as compressed Parquet, runs each side (by
/// default each in a process of its own) on the file, prints the table and the goals' ratios, checks
/// every side's sums against the reference made with the data, and fails with exit code 2 on a
/// wrong sum.
/// </summary>
public static class ColumnarCommand
{
    private const string ResultPrefix = "columnar-result: ";
    private const double MiB = 1024.0 * 1024.0;

    /// <summary>Runs the verb.</summary>
    /// <exception cref="CommandLineException">An option is out of range or names an unknown side or codec.</exception>
    /// <exception cref="InsufficientMemoryException">The columns do not fit in this machine's memory.</exception>
    public static int Run(ColumnarOptions options, TextWriter output, TextWriter error)
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentNullException.ThrowIfNull(output);
        ArgumentNullException.ThrowIfNull(error);
        List<ColumnarSide> sides = ParseSides(CommaList.Split(options.Sides));
        if (options.ChildFile is not null)
        {
            if (sides.Count != 1)
            {
                throw new CommandLineException("columnar: a child runs exactly one side.");
            }

            SideProcess.WriteResult(output, ResultPrefix, RunSide(sides[0], options.ChildFile, !options.NoPageChecksums));
            return Program.ExitSuccess;
        }

        if (options.Columns is < 1 or > ColumnarData.MaxColumns)
        {
            throw new CommandLineException($"columnar: --columns must be from 1 to {ColumnarData.MaxColumns}; got {options.Columns}.");
        }

        if (options.Rows < 0)
        {
            throw new CommandLineException($"columnar: --rows must be at least 1 (or 0 to fill --budget); got {options.Rows}.");
        }

        long budget = IoCommand.ParseSize("--budget", options.Budget, "columnar");
        long bytesPerRow = options.Columns * (long)sizeof(double);
        long rows = options.Rows == 0 ? budget / bytesPerRow : options.Rows;
        if (rows < 1)
        {
            throw new CommandLineException($"columnar: --budget {options.Budget} does not hold one row of {options.Columns} columns ({bytesPerRow} bytes).");
        }

        if (rows > ColumnarData.MaxRows)
        {
            throw new CommandLineException($"columnar: {rows:N0} rows is more than {ColumnarData.MaxRows:N0}, the most whose column sums stay exact in a double; lower --rows{(options.Rows == 0 ? " or --budget" : "")}.");
        }

        long dataBytes = rows * bytesPerRow;
        if (dataBytes > budget)
        {
            throw new CommandLineException($"columnar: {options.Columns} columns of {rows:N0} rows take {MemoryCheck.Format(dataBytes)}, more than --budget {options.Budget}; raise --budget or lower --rows or --columns.");
        }

        Compression codec = ParseCodec(options.Codec);
        if (sides.Contains(ColumnarSide.Managed) && rows > Array.MaxLength)
        {
            if (sides.Count == 1)
            {
                throw new CommandLineException($"columnar: the managed side holds each column in one .NET array, at most {Array.MaxLength:N0} rows; run the native sides (--side native-4k,native-huge) for {rows:N0} rows.");
            }

            output.WriteLine($"columnar: managed: not run: {rows:N0} rows is more than one .NET array holds ({Array.MaxLength:N0}); the other sides run.");
            sides.Remove(ColumnarSide.Managed);
        }

        string folder = options.Directory ?? Path.GetTempPath();
        if (!Directory.Exists(folder))
        {
            throw new CommandLineException($"columnar: --dir '{folder}' does not exist.");
        }

        if (options.Plot is not null)
        {
            // Before the file is written and the sides run, not after.
            ChartFile.CheckPath(options.Plot, "columnar");
        }

        MemoryCheck.EnsureFits("columnar", new MemoryNeed(dataBytes, sides.Contains(ColumnarSide.Managed) ? dataBytes : 0,
            $"{options.Columns} columns of {rows:N0} doubles"));
        IReadOnlyList<string>? jembench = options.InProcess ? null : SideProcess.JembenchCommand();
        if (!options.InProcess && jembench is null)
        {
            output.WriteLine("columnar: this process is not jembench, so the sides run in this process (peak RSS is then cumulative).");
        }

        string path = Path.Combine(folder, $"jembench-columnar-{Guid.NewGuid():N}.parquet");
        try
        {
            return Run(options, sides, rows, dataBytes, codec, path, jembench, output, error);
        }
        finally
        {
            File.Delete(path);
        }
    }

    /// <summary>The lowercase name of a side, as --side takes it.</summary>
    public static string Name(ColumnarSide side) => side switch
    {
        ColumnarSide.Managed => "managed",
        ColumnarSide.Native4K => "native-4k",
        ColumnarSide.NativeHuge => "native-huge",
        _ => "decode",
    };

    private static int Run(ColumnarOptions options, List<ColumnarSide> sides, long rows, long dataBytes, Compression codec, string path,
        IReadOnlyList<string>? jembench, TextWriter output, TextWriter error)
    {
        output.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"columnar: {options.Columns} columns x {rows:N0} rows of doubles ({MemoryCheck.Format(dataBytes)}, --budget {options.Budget}), {codec} Parquet, page checksums {(options.NoPageChecksums ? "off" : "written and verified")}; sides: {string.Join(", ", sides.Select(Name))}; {Environment.ProcessorCount} cores; GC: {(System.Runtime.GCSettings.IsServerGC ? "server" : "workstation")}."));
        var write = Stopwatch.StartNew();
        ColumnarReference reference;
        try
        {
            reference = ColumnarData.Write(path, options.Columns, rows, codec, pageChecksums: !options.NoPageChecksums);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or ParquetException)
        {
            // The folder passed the check before the run but takes no file (read-only, full, or not a real folder).
            error.WriteLine($"columnar: the Parquet file could not be written to '{path}': {e.Message}");
            return Program.ExitBadArguments;
        }

        output.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"columnar: generated and wrote {path}: {new FileInfo(path).Length / MiB:N0} MiB in {write.Elapsed.TotalSeconds:F1} s."));
        var results = new List<ColumnarResult>();
        foreach (ColumnarSide side in sides)
        {
            ColumnarResult? result = jembench is null
                ? RunSide(side, path, !options.NoPageChecksums)
                : SideProcess.Run<ColumnarResult>(jembench, ["columnar", "--child-file", path, "--side", Name(side), .. options.NoPageChecksums ? (string[])["--no-page-checksums"] : []], ResultPrefix, $"columnar: the {Name(side)}", error);
            if (result is null)
            {
                error.WriteLine($"columnar: the {Name(side)} side failed.");
                return Program.ExitBenchmarkFailed;
            }

            results.Add(result);
            output.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"columnar: {Name(side)} done: load {result.LoadSeconds:F2} s, sum {result.SumSeconds:F2} s, free {result.FreeSeconds:F2} s."));
        }

        PrintTable(results, dataBytes, output);
        PrintGoals(results, rows, output);
        bool right = true;
        foreach (ColumnarResult result in results)
        {
            foreach (string wrong in reference.Differences(result))
            {
                error.WriteLine($"columnar: WRONG RESULT: {Name(result.Side)}: {wrong}.");
                right = false;
            }
        }

        if (!right)
        {
            return Program.ExitBenchmarkFailed;
        }

        if (options.Plot is not null
            && ChartFile.Write("columnar", options.Plot, file => ColumnarChart.Write(results, file), output, error) != Program.ExitSuccess)
        {
            return Program.ExitBadArguments;
        }

        output.WriteLine($"columnar: results checked: every side's {options.Columns} column sums and {rows:N0} row sums match the reference made with the data.");
        return Program.ExitSuccess;
    }

    private static ColumnarResult RunSide(ColumnarSide side, string path, bool verifyPageChecksums)
    {
        try
        {
            return ColumnarHarness.Run(side, path, verifyPageChecksums);
        }
        catch (NotSupportedException e)
        {
            throw new CommandLineException($"columnar: {e.Message}");
        }
    }

    private static List<ColumnarSide> ParseSides(string[] given)
    {
        if (given.Length == 0)
        {
            return [.. Enum.GetValues<ColumnarSide>()];
        }

        var sides = new List<ColumnarSide>();
        foreach (string name in given)
        {
            ColumnarSide side = name switch
            {
                "managed" => ColumnarSide.Managed,
                "native-4k" => ColumnarSide.Native4K,
                "native-huge" => ColumnarSide.NativeHuge,
                "decode" => ColumnarSide.Decode,
                _ => throw new CommandLineException($"columnar: unknown side '{name}'; the sides are managed, native-4k, native-huge and decode."),
            };
            if (!sides.Contains(side))
            {
                sides.Add(side);
            }
        }

        return sides;
    }

    private static Compression ParseCodec(string name) => ParquetCodecs.Parse(name, "columnar");

    private static void PrintTable(List<ColumnarResult> results, long dataBytes, TextWriter output)
    {
        output.WriteLine();
        output.WriteLine("| Side | Load (s) | Sum (s) | Free (s) | Wall (s) | User (s) | System (s) | Minor faults | Major faults | Voluntary switches | Involuntary switches | Peak RSS (MiB) | GCs 0/1/2 | Load (MB/s of values) |");
        output.WriteLine("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        foreach (ColumnarResult r in results)
        {
            output.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"| {Name(r.Side)} | {r.LoadSeconds:F2} | {(r.Side == ColumnarSide.Decode ? "(in load)" : r.SumSeconds.ToString("F2", CultureInfo.InvariantCulture))} | {r.FreeSeconds:F3} | {r.WallSeconds:F2} | {r.UserSeconds:F2} | {r.SystemSeconds:F2} | {Count(r.MinorFaults)} | {Count(r.MajorFaults)} | {Count(r.VoluntarySwitches)} | {Count(r.InvoluntarySwitches)} | {(r.PeakRssBytes < 0 ? "n/a" : (r.PeakRssBytes / MiB).ToString("F0", CultureInfo.InvariantCulture))} | {r.Gen0}/{r.Gen1}/{r.Gen2} | {dataBytes / 1e6 / r.LoadSeconds:F0} |"));
        }
    }

    private static void PrintGoals(List<ColumnarResult> results, long rows, TextWriter output)
    {
        ColumnarResult? managed = results.Find(r => r.Side == ColumnarSide.Managed);
        ColumnarResult? huge = results.Find(r => r.Side == ColumnarSide.NativeHuge);
        ColumnarResult? small = results.Find(r => r.Side == ColumnarSide.Native4K);
        ColumnarResult? decode = results.Find(r => r.Side == ColumnarSide.Decode);
        output.WriteLine();
        output.WriteLine("Goals (this run; on a shared or small machine the times are noisy):");
        if (huge is not null)
        {
            output.WriteLine($"  native-huge gen-2 collections: {huge.Gen2} (goal 0): {(huge.Gen2 == 0 ? "met" : "NOT met")}");
        }

        if (managed is not null && huge is not null)
        {
            Goal(output, "native-huge load+sum speed vs managed (managed wall / native-huge wall)", managed.LoadAndSumSeconds, huge.LoadAndSumSeconds, 1.2);
            if (managed.PageFaults >= 0 && huge.PageFaults >= 0)
            {
                Goal(output, "page faults, managed / native-huge", managed.PageFaults, Math.Max(1, huge.PageFaults), 10);
            }

            output.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"  CPU time (user + system), managed / native-huge: {(managed.UserSeconds + managed.SystemSeconds) / (huge.UserSeconds + huge.SystemSeconds):F3}x (no goal: what a busy machine leaves alone, unlike wall time)"));
        }

        if (managed is not null)
        {
            foreach (ColumnarResult native in new[] { huge, small }.OfType<ColumnarResult>())
            {
                Goal(output, $"Parquet read throughput, {Name(native.Side)} vs managed (managed load / {Name(native.Side)} load)", managed.LoadSeconds, native.LoadSeconds, 0.9);
            }
        }

        if (decode is not null)
        {
            foreach (ColumnarResult side in results.Where(r => r.Side != ColumnarSide.Decode))
            {
                output.WriteLine(string.Create(CultureInfo.InvariantCulture,
                    $"  decoder limit: {Name(side.Side)} loads at {decode.LoadSeconds / side.LoadSeconds:F3}x the speed of decoding alone into one reused buffer ({decode.LoadSeconds:F2} s, sums included)"));
            }
        }

        if (rows > int.MaxValue)
        {
            output.WriteLine($"  past 2^31 rows ({rows:N0}): the native sides ran; managed arrays cannot hold a column.");
        }
    }

    private static void Goal(TextWriter output, string what, double other, double native, double target)
    {
        double ratio = native == 0 ? double.PositiveInfinity : other / native;
        output.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"  {what}: {ratio:F3}x (goal >= {target:F1}x): {(ratio >= target ? "met" : "NOT met")}"));
    }

    private static string Count(long value) => value < 0 ? "n/a" : value.ToString("N0", CultureInfo.InvariantCulture);
}
