using System.Diagnostics;
using System.Globalization;

namespace jemalloc.PerfCompare;

/// <summary>
/// The driver: starts the worker processes of both builds, warms each measurement up in every one,
/// sets one operation count per measurement for both sides, then runs the rounds. In a round every
/// measurement runs on old and on new back to back, which of the two first alternating, so that noise
/// from the rest of the machine falls on both sides alike; with several processes per side, they take
/// turns by round, so that no side's result rests on one process's code layout or profile.
/// </summary>
internal static class Comparison
{
    // Calls per measurement and worker before the rounds: tiered compilation promotes a method after 30 calls.
    private const int MinimumWarmupCalls = 40;

    /// <summary>Runs the comparison, printing its progress.</summary>
    /// <returns>
    /// One result per measurement, in the order of <see cref="CompareOptions.Measurements"/>, on the clock
    /// of <see cref="CompareOptions.Clock"/> (the wall clock where there is no CPU clock; <paramref name="cpuClock"/> says which).
    /// </returns>
    /// <exception cref="ResultCheckException">A measurement computed a wrong result on either side.</exception>
    /// <exception cref="WorkerException">A worker failed.</exception>
    internal static IReadOnlyList<RowResult> Run(CompareOptions options, TextWriter output, LoadAverage load, out bool cpuClock)
    {
        IReadOnlyList<Measurement> measurements = options.Measurements;
        var olds = new List<WorkerProcess>();
        var news = new List<WorkerProcess>();
        try
        {
            load.Sample();
            for (int k = 1; k <= options.Processes; k++)
            {
                olds.Add(WorkerProcess.Start($"old #{k}", options.OldAssembly));
                news.Add(WorkerProcess.Start($"new #{k}", options.NewAssembly));
            }

            Report.Header(output, options, olds[0].Description, news[0].Description);
            var clock = Stopwatch.StartNew();
            long[] operations = WarmUp(options, measurements, olds, news);
            output.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"warm-up: {clock.Elapsed.TotalSeconds:F0} s; operations per run: {string.Join(", ", measurements.Select((m, i) => $"{m.Name} {operations[i]:N0}"))}"));

            // One round unrecorded: the first runs at the final operation counts settle the caches and the heaps.
            var oldTimes = measurements.Select(_ => new List<(double Wall, double Cpu)>()).ToArray();
            var newTimes = measurements.Select(_ => new List<(double Wall, double Cpu)>()).ToArray();
            RunRound(-1, measurements, operations, olds, news, oldTimes, newTimes);
            cpuClock = options.Clock == "cpu" && oldTimes.Concat(newTimes).All(times => times.All(t => t.Cpu > 0));
            foreach (List<(double Wall, double Cpu)> times in oldTimes.Concat(newTimes))
            {
                times.Clear();
            }

            Report.RoundHeader(output, measurements, cpuClock);
            for (int round = 0; round < options.Rounds; round++)
            {
                RunRound(round, measurements, operations, olds, news, oldTimes, newTimes);
                load.Sample();
                bool cpu = cpuClock;
                Report.Round(output, round, (round % options.Processes) + 1, measurements, [.. measurements.Select((_, i) => Pick(newTimes[i][round], cpu) / Pick(oldTimes[i][round], cpu))]);
            }

            output.WriteLine(string.Create(CultureInfo.InvariantCulture, $"measured in {clock.Elapsed.TotalSeconds:F0} s (warm-up included)"));
            return Results(options, oldTimes, newTimes, cpuClock);
        }
        finally
        {
            foreach (WorkerProcess worker in olds.Concat(news))
            {
                worker.Dispose();
            }
        }
    }

    private static RowResult[] Results(CompareOptions options, List<(double Wall, double Cpu)>[] oldTimes, List<(double Wall, double Cpu)>[] newTimes, bool cpu) =>
        [.. options.Measurements.Select((m, i) =>
            RowResult.From(m, [.. oldTimes[i].Select(t => Pick(t, cpu))], [.. newTimes[i].Select(t => Pick(t, cpu))], options.Tolerance))];

    private static double Pick((double Wall, double Cpu) time, bool cpu) => cpu ? time.Cpu : time.Wall;

    // Warms every measurement up in every worker; returns, per measurement, the operations that take
    // about --sample-ms on the first old worker, the count both sides then run in every round.
    private static long[] WarmUp(CompareOptions options, IReadOnlyList<Measurement> measurements, List<WorkerProcess> olds, List<WorkerProcess> news)
    {
        long[] operations = new long[measurements.Count];
        for (int i = 0; i < measurements.Count; i++)
        {
            for (int k = 0; k < olds.Count; k++)
            {
                double nanoseconds = WarmUp(olds[k], measurements[i], options.WarmupMilliseconds);
                WarmUp(news[k], measurements[i], options.WarmupMilliseconds);
                if (k == 0)
                {
                    operations[i] = (long)Math.Clamp(Math.Round(options.SampleMilliseconds * 1e6 / nanoseconds), 1, int.MaxValue);
                }
            }
        }

        return operations;
    }

    // Runs the measurement with doubling operation counts up to calls of about 2 ms, until it has run
    // MinimumWarmupCalls times and for the given time; returns the last call's ns per operation (wall clock).
    private static double WarmUp(WorkerProcess worker, Measurement measurement, int milliseconds)
    {
        long operations = 1;
        double nanoseconds = 0;
        var clock = Stopwatch.StartNew();
        for (int calls = 0; calls < MinimumWarmupCalls || clock.ElapsedMilliseconds < milliseconds; calls++)
        {
            nanoseconds = worker.Run(measurement, operations).Wall;
            if (nanoseconds * operations < 2e6 && operations < int.MaxValue / 2)
            {
                operations *= 2;
            }
        }

        return nanoseconds;
    }

    private static void RunRound(int round, IReadOnlyList<Measurement> measurements, long[] operations, List<WorkerProcess> olds, List<WorkerProcess> news,
        List<(double Wall, double Cpu)>[] oldTimes, List<(double Wall, double Cpu)>[] newTimes)
    {
        // Rounds go through the processes in turn, and which side runs first changes from one turn to
        // the next (and from one measurement to the next), so every pair of processes runs each side
        // first equally often: running first or second must not pass for a difference between the builds.
        int k = (round + olds.Count) % olds.Count;
        int turn = (round + olds.Count) / olds.Count;
        for (int i = 0; i < measurements.Count; i++)
        {
            bool oldFirst = (turn + i) % 2 == 0;
            WorkerProcess first = oldFirst ? olds[k] : news[k];
            WorkerProcess second = oldFirst ? news[k] : olds[k];
            (double Wall, double Cpu) firstTime = first.Run(measurements[i], operations[i]);
            (double Wall, double Cpu) secondTime = second.Run(measurements[i], operations[i]);
            oldTimes[i].Add(oldFirst ? firstTime : secondTime);
            newTimes[i].Add(oldFirst ? secondTime : firstTime);
        }
    }
}
