using System.Diagnostics;
using System.Globalization;

namespace jemalloc.PerfCompare;

/// <summary>
/// The driver: starts the worker processes of both builds, warms each measurement up in every one,
/// sets one operation count per measurement for both sides, then runs the rounds. In a round every
/// measurement runs on old and on new back to back, which of the two first alternating, so that noise
/// from the rest of the machine falls on both sides alike; with several processes per side, they take
/// turns by round, so that no side's result rests on one process's code layout or profile (see <see cref="RowResult"/>).
/// </summary>
internal static class Comparison
{
    // Calls per measurement and worker before the rounds, at least: tiered compilation promotes a method after 30 calls.
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
            (long[] operations, double[] seconds) = WarmUp(options, measurements, olds, news);
            output.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"warm-up: {clock.Elapsed.TotalSeconds:F0} s ({string.Join(", ", measurements.Select((m, i) => $"{m.Name} {seconds[i]:F0} s"))})"));
            output.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"operations per run, both sides: {string.Join(", ", measurements.Select((m, i) => $"{m.Name} {operations[i]:N0}"))}"));

            // One round unrecorded: the first runs at the final operation counts settle the caches and the heaps.
            var oldTimes = measurements.Select(_ => new List<Sample>()).ToArray();
            var newTimes = measurements.Select(_ => new List<Sample>()).ToArray();
            RunRound(-1, measurements, operations, olds, news, oldTimes, newTimes);
            cpuClock = options.Clock == "cpu" && oldTimes.Concat(newTimes).All(times => times.All(t => t.Cpu > 0));
            foreach (List<Sample> times in oldTimes.Concat(newTimes))
            {
                times.Clear();
            }

            Report.RoundHeader(output, measurements, cpuClock);
            for (int round = 0; round < options.Rounds; round++)
            {
                RunRound(round, measurements, operations, olds, news, oldTimes, newTimes);
                load.Sample();
                bool cpu = cpuClock;
                Report.Round(output, round, (round % options.Processes) + 1, measurements, [.. measurements.Select((_, i) => newTimes[i][round].Time(cpu) / oldTimes[i][round].Time(cpu))]);
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

    private static RowResult[] Results(CompareOptions options, List<Sample>[] oldTimes, List<Sample>[] newTimes, bool cpu) =>
        [.. options.Measurements.Select((m, i) =>
            RowResult.From(m, [.. oldTimes[i].Select(t => t.Time(cpu))], [.. newTimes[i].Select(t => t.Time(cpu))], options.Processes, options.Tolerance))];

    // Warms every measurement up in every worker, and sets its operation count. On the first old
    // process, operation counts doubling from 1 (after one call of one: the first call compiles)
    // until a call takes about 2 ms; then every worker at once warms up with calls of that size, for
    // at least MinimumWarmupCalls calls and --warmup-ms, and on until its JIT is done (see Worker): a
    // side still running unoptimized code would measure the JIT, not the library. Last, every worker
    // makes two calls of about a third of --sample-ms, one after the other, and the first old
    // process's faster one sets the operation count of the rounds, the same for both sides. Times on
    // the clock of --clock. Returns the operation counts and each measurement's warm-up time.
    private static (long[] Operations, double[] Seconds) WarmUp(CompareOptions options, IReadOnlyList<Measurement> measurements, List<WorkerProcess> olds, List<WorkerProcess> news)
    {
        bool cpu = options.Clock == "cpu";
        List<WorkerProcess> workers = [.. olds.Concat(news)];
        long[] operations = new long[measurements.Count];
        double[] seconds = new double[measurements.Count];
        for (int i = 0; i < measurements.Count; i++)
        {
            var clock = Stopwatch.StartNew();
            Measurement measurement = measurements[i];
            olds[0].Run(measurement, 1);
            long size = 1;
            double perOperation = olds[0].Run(measurement, size).Time(cpu);
            while (perOperation * size < 2e6 && size < int.MaxValue / 2)
            {
                size *= 2;
                perOperation = olds[0].Run(measurement, size).Time(cpu);
            }

            int calls = Math.Max(MinimumWarmupCalls, (int)Math.Ceiling(options.WarmupMilliseconds * 1e6 / (perOperation * size)));
            foreach (WorkerProcess worker in workers)
            {
                worker.StartWarmUp(measurement, size, calls);
            }

            // Every worker's answer is read, in order: each waits in its pipe until then.
            double[] settled = [.. workers.Select(worker => worker.Receive(measurement).Time(cpu))];
            long third = Operations(options.SampleMilliseconds / 3.0, settled[0]);
            operations[i] = Operations(options.SampleMilliseconds, Math.Min(olds[0].Run(measurement, third).Time(cpu), olds[0].Run(measurement, third).Time(cpu)));
            foreach (WorkerProcess worker in workers.Skip(1))
            {
                worker.Run(measurement, third);
                worker.Run(measurement, third);
            }

            seconds[i] = clock.Elapsed.TotalSeconds;
        }

        return (operations, seconds);
    }

    // The operations that take `milliseconds` at `perOperation` ns each (at least 1, at most int.MaxValue).
    private static long Operations(double milliseconds, double perOperation) =>
        (long)Math.Clamp(Math.Round(milliseconds * 1e6 / perOperation), 1, int.MaxValue);

    private static void RunRound(int round, IReadOnlyList<Measurement> measurements, long[] operations, List<WorkerProcess> olds, List<WorkerProcess> news,
        List<Sample>[] oldTimes, List<Sample>[] newTimes)
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
            Sample firstTime = first.Run(measurements[i], operations[i]);
            Sample secondTime = second.Run(measurements[i], operations[i]);
            oldTimes[i].Add(oldFirst ? firstTime : secondTime);
            newTimes[i].Add(oldFirst ? secondTime : firstTime);
        }
    }
}
