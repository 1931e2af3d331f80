using System.Diagnostics;
using System.Globalization;
using jemalloc.Cli.Options;
using jemalloc.Cli.Strings;
using ParquetSharp;

namespace jemalloc.Cli.Commands;

/// <summary>
/// <c>jembench strings</c>: writes the string table once as compressed Parquet, runs each side (by
/// default each in a process of its own) on the file, prints the table and the goals' ratios, checks
/// every side's filtered rows, groups and id sum against the reference made with the data, and fails
/// with exit code 2 on a wrong result.
/// </summary>
public static class StringsCommand
{
    private const string ResultPrefix = "strings-result: ";
    private const double MiB = 1024.0 * 1024.0;

    // What a row takes, roughly: native, the five columns with their offsets (and the table being made);
    // managed, a string object per value (UTF-16), the references, a decimal? and a long.
    private const long NativeBytesPerRow = 300;
    private const long ManagedBytesPerRow = 600;

    /// <summary>Runs the verb.</summary>
    /// <exception cref="CommandLineException">An option is out of range or names an unknown side or codec, or a child's file is not the table (a column missing or of another type, or damaged).</exception>
    /// <exception cref="InsufficientMemoryException">The table does not fit in this machine's memory.</exception>
    public static int Run(StringsOptions options, TextWriter output, TextWriter error)
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentNullException.ThrowIfNull(output);
        ArgumentNullException.ThrowIfNull(error);
        List<StringsSide> sides = ParseSides(CommaList.Split(options.Sides));
        if (options.ChildFile is not null)
        {
            if (sides.Count != 1)
            {
                throw new CommandLineException("strings: a child runs exactly one side.");
            }

            SideProcess.WriteResult(output, ResultPrefix, RunSide(sides[0], options.ChildFile));
            return Program.ExitSuccess;
        }

        if (options.Rows < 1 || options.Rows > Array.MaxLength)
        {
            throw new CommandLineException($"strings: --rows must be from 1 to {Array.MaxLength:N0} (the most a .NET array holds, so that the managed side can run); got {options.Rows:N0}.");
        }

        Compression codec = ParquetCodecs.Parse(options.Codec, "strings");
        string folder = options.Directory ?? Path.GetTempPath();
        if (!Directory.Exists(folder))
        {
            throw new CommandLineException($"strings: --dir '{folder}' does not exist.");
        }

        long rows = options.Rows;
        MemoryCheck.EnsureFits("strings", new MemoryNeed(rows * NativeBytesPerRow, sides.Contains(StringsSide.Managed) ? rows * ManagedBytesPerRow : 0,
            $"a table of {rows:N0} rows with three string columns"));
        IReadOnlyList<string>? jembench = options.InProcess ? null : SideProcess.JembenchCommand();
        if (!options.InProcess && jembench is null)
        {
            output.WriteLine("strings: this process is not jembench, so the sides run in this process (peak RSS and collections are then cumulative).");
        }

        string path = Path.Combine(folder, $"jembench-strings-{Guid.NewGuid():N}.parquet");
        try
        {
            return Run(sides, rows, codec, path, jembench, output, error);
        }
        finally
        {
            File.Delete(path);
        }
    }

    /// <summary>The lowercase name of a side, as --side takes it.</summary>
    public static string Name(StringsSide side) => side switch
    {
        StringsSide.Managed => "managed",
        StringsSide.Native4K => "native-4k",
        StringsSide.NativeHuge => "native-huge",
        _ => "decode",
    };

    private static int Run(List<StringsSide> sides, long rows, Compression codec, string path,
        IReadOnlyList<string>? jembench, TextWriter output, TextWriter error)
    {
        output.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"strings: {rows:N0} rows (id, category, region, note, amount), {codec} Parquet; filter: note starts with '{StringsData.NotePrefix}', group by category; sides: {string.Join(", ", sides.Select(Name))}; {Environment.ProcessorCount} cores; GC: {(System.Runtime.GCSettings.IsServerGC ? "server" : "workstation")}."));
        var write = Stopwatch.StartNew();
        StringsReference reference;
        try
        {
            reference = StringsData.Write(path, rows, codec);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or ParquetException)
        {
            // The folder passed the check before the run but takes no file (read-only, full, or not a real folder).
            error.WriteLine($"strings: the Parquet file could not be written to '{path}': {e.Message}");
            return Program.ExitBadArguments;
        }

        // The table was made in this process's heaps: their freed pages go back to the system now, not
        // after jemalloc's decay time, so that the sides do not compete with them for memory.
        JemTuning.PurgeAll();
        output.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"strings: generated and wrote {path}: {new FileInfo(path).Length / MiB:N0} MiB ({reference.StringBytes / MiB:N0} MiB of UTF-8 in the string columns; {reference.FilteredRows:N0} rows to keep in {reference.Groups.Length:N0} categories) in {write.Elapsed.TotalSeconds:F1} s."));
        var results = new List<StringsResult>();
        using (var load = new HostLoad())
        {
            foreach (StringsSide side in sides)
            {
                StringsResult? result = jembench is null
                    ? RunSide(side, path)
                    : SideProcess.Run<StringsResult>(jembench, ["strings", "--child-file", path, "--side", Name(side)], ResultPrefix, $"strings: the {Name(side)}", error);
                if (result is null)
                {
                    error.WriteLine($"strings: the {Name(side)} side failed.");
                    return Program.ExitBenchmarkFailed;
                }

                results.Add(result);
                output.WriteLine(string.Create(CultureInfo.InvariantCulture,
                    $"strings: {Name(side)} done: load {result.LoadSeconds:F2} s, filter {InLoad(result, result.FilterSeconds)} s, group {InLoad(result, result.GroupSeconds)} s, free {result.FreeSeconds:F3} s."));
            }

            load.Report(output, "strings");
        }

        PrintTable(results, reference, output);
        PrintGoals(results, output);
        bool right = true;
        foreach (StringsResult result in results)
        {
            foreach (string wrong in reference.Differences(result))
            {
                error.WriteLine($"strings: WRONG RESULT: {Name(result.Side)}: {wrong}.");
                right = false;
            }
        }

        if (!right)
        {
            return Program.ExitBenchmarkFailed;
        }

        output.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"strings: results checked: every side kept {reference.FilteredRows:N0} rows in {reference.Groups.Length:N0} categories with the reference's rows and amount per category, and the id column's sum."));
        return Program.ExitSuccess;
    }

    private static StringsResult RunSide(StringsSide side, string path)
    {
        try
        {
            return StringsHarness.Run(side, path);
        }
        catch (Exception e) when (e is ArgumentException or InvalidDataException or InvalidCastException or NotSupportedException or IOException or ParquetException)
        {
            // A file that is not the table (a column missing or of another type, damaged, absent): the user's mistake, said as such.
            throw new CommandLineException($"strings: the {Name(side)} side cannot run on '{path}': {e.Message}");
        }
    }

    private static List<StringsSide> ParseSides(string[] given)
    {
        if (given.Length == 0)
        {
            return [.. Enum.GetValues<StringsSide>()];
        }

        var sides = new List<StringsSide>();
        foreach (string name in given)
        {
            StringsSide side = name switch
            {
                "managed" => StringsSide.Managed,
                "native-4k" => StringsSide.Native4K,
                "native-huge" => StringsSide.NativeHuge,
                "decode" => StringsSide.Decode,
                _ => throw new CommandLineException($"strings: unknown side '{name}'; the sides are managed, native-4k, native-huge and decode."),
            };
            if (!sides.Contains(side))
            {
                sides.Add(side);
            }
        }

        return sides;
    }

    private static void PrintTable(List<StringsResult> results, StringsReference reference, TextWriter output)
    {
        output.WriteLine();
        output.WriteLine("| Side | Load (s) | Filter (s) | Group (s) | Free (s) | Wall (s) | User (s) | System (s) | Minor faults | Major faults | Peak RSS (MiB) | GCs 0/1/2 | GC pauses (ms) | Longest GC pause (ms) | String load (s) | String load (MB/s) |");
        output.WriteLine("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        foreach (StringsResult r in results)
        {
            output.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"| {Name(r.Side)} | {r.LoadSeconds:F2} | {InLoad(r, r.FilterSeconds)} | {InLoad(r, r.GroupSeconds)} | {r.FreeSeconds:F3} | {r.WallSeconds:F2} | {r.UserSeconds:F2} | {r.SystemSeconds:F2} | {Count(r.MinorFaults)} | {Count(r.MajorFaults)} | {(r.PeakRssBytes < 0 ? "n/a" : (r.PeakRssBytes / MiB).ToString("F0", CultureInfo.InvariantCulture))} | {r.Gen0}/{r.Gen1}/{r.Gen2} | {r.TotalGcPauseMs:F1} | {Milliseconds(r.LongestGcPauseMs)} | {r.StringLoadSeconds:F2} | {reference.StringBytes / 1e6 / r.StringLoadSeconds:F0} |"));
        }
    }

    private static void PrintGoals(List<StringsResult> results, TextWriter output)
    {
        StringsResult? managed = results.Find(r => r.Side == StringsSide.Managed);
        StringsResult? huge = results.Find(r => r.Side == StringsSide.NativeHuge);
        StringsResult? small = results.Find(r => r.Side == StringsSide.Native4K);
        StringsResult? decode = results.Find(r => r.Side == StringsSide.Decode);
        StringsResult[] natives = [.. new[] { small, huge }.OfType<StringsResult>()];
        output.WriteLine();
        output.WriteLine("Goals (this run; on a shared or small machine the times are noisy):");
        foreach (StringsResult native in natives)
        {
            output.WriteLine($"  {Name(native.Side)} gen-2 collections: {native.Gen2} (goal 0): {(native.Gen2 == 0 ? "met" : "NOT met")}");
        }

        if (decode is not null)
        {
            foreach (StringsResult side in results.Where(r => r.Side != StringsSide.Decode))
            {
                output.WriteLine(string.Create(CultureInfo.InvariantCulture,
                    $"  decoder limit: {Name(side.Side)} loads the string columns at {decode.StringLoadSeconds / side.StringLoadSeconds:F3}x the speed of decoding them alone into one reused buffer ({decode.StringLoadSeconds:F2} s, filter and grouping included)"));
            }
        }

        if (managed is null)
        {
            return;
        }

        if (huge is not null)
        {
            AtLeast(output, "native-huge speed vs managed (managed wall / native-huge wall)", managed.WallSeconds / huge.WallSeconds, 1.5);
            output.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"  CPU time (user + system), managed / native-huge: {(managed.UserSeconds + managed.SystemSeconds) / (huge.UserSeconds + huge.SystemSeconds):F3}x (no goal: what a busy machine leaves alone, unlike wall time)"));
        }

        foreach (StringsResult native in natives)
        {
            if (managed.PeakRssBytes > 0 && native.PeakRssBytes > 0)
            {
                double ratio = (double)native.PeakRssBytes / managed.PeakRssBytes;
                output.WriteLine(string.Create(CultureInfo.InvariantCulture,
                    $"  peak RSS, {Name(native.Side)} / managed: {ratio:F3}x (goal <= 0.6x): {(ratio <= 0.6 ? "met" : "NOT met")}"));
            }

            if (managed.LongestGcPauseMs < 0 || native.LongestGcPauseMs < 0)
            {
                output.WriteLine($"  longest GC pause, {Name(native.Side)} against managed: unknown (the runtime's GC events did not arrive)");
            }
            else
            {
                bool met = native.LongestGcPauseMs * 20 <= managed.LongestGcPauseMs;
                output.WriteLine(string.Create(CultureInfo.InvariantCulture,
                    $"  longest GC pause, {Name(native.Side)} / managed: {native.LongestGcPauseMs:F2} ms / {managed.LongestGcPauseMs:F2} ms = {(managed.LongestGcPauseMs == 0 ? "n/a" : (native.LongestGcPauseMs / managed.LongestGcPauseMs).ToString("F3", CultureInfo.InvariantCulture) + "x")} (goal <= 1/20 = 0.050x): {(met ? "met" : "NOT met")}"));
            }
        }

        if (small is not null)
        {
            AtLeast(output, "string column read throughput, native-4k vs managed (managed string load / native-4k string load)", managed.StringLoadSeconds / small.StringLoadSeconds, 0.9);
        }
    }

    private static void AtLeast(TextWriter output, string what, double ratio, double target) =>
        output.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"  {what}: {ratio:F3}x (goal >= {target:F1}x): {(ratio >= target ? "met" : "NOT met")}"));

    // The decode side filters and groups while it decodes.
    private static string InLoad(StringsResult result, double seconds) =>
        result.Side == StringsSide.Decode ? "(in load)" : seconds.ToString("F3", CultureInfo.InvariantCulture);

    private static string Milliseconds(double value) => value < 0 ? "n/a" : value.ToString("F2", CultureInfo.InvariantCulture);

    private static string Count(long value) => value < 0 ? "n/a" : value.ToString("N0", CultureInfo.InvariantCulture);
}
