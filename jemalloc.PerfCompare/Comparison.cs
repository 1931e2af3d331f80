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

    // The JIT counts as done with a measurement once a pause and the calls after it passed with nothing
    // compiled: tiered compilation counts calls only after 100 ms without new unoptimized code, promotes
    // a method after 30, and compiles it on a background thread (twice with dynamic PGO: instrumented, then optimized).
    private const int SettleCalls = 12;
    private const int SettleRounds = 4;
    private static readonly TimeSpan SettlePause = TimeSpan.FromMilliseconds(200);
    private static readonly TimeSpan JitSettleLimit = TimeSpan.FromSeconds(120);

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

    // Warms every measurement up in every worker, and sets its operation count. Every worker makes the
    // same calls: one of one operation (the first call compiles), then operation counts doubling
    // from 1 until a call takes about 2 ms on the first old process, then calls of that size for at
    // least MinimumWarmupCalls calls and --warmup-ms; then each goes on until its JIT is done
    // (SettleJit): tiered compilation promotes a method to optimized code on a background thread, which
    // a busy worker can hold off for as long as it keeps the core (300 back-to-back calls on a busy
    // machine still ran unoptimized code), and a side still running that would measure the JIT, not the
    // library. Last, a call of about a third of --sample-ms, from which the first old process's time
    // sets the operation count of the rounds, the same for both sides. Times on the clock of --clock.
    private static long[] WarmUp(CompareOptions options, IReadOnlyList<Measurement> measurements, List<WorkerProcess> olds, List<WorkerProcess> news)
    {
        bool cpu = options.Clock == "cpu";
        List<WorkerProcess> workers = [.. olds.Concat(news)];
        long[] operations = new long[measurements.Count];
        for (int i = 0; i < measurements.Count; i++)
        {
            Measurement measurement = measurements[i];
            var plan = new List<long> { 1 };
            olds[0].Run(measurement, 1);
            for (long size = 1; ; size *= 2)
            {
                double perOperation = olds[0].Run(measurement, size).Time(cpu);
                plan.Add(size);
                if (perOperation * size >= 2e6 || size >= int.MaxValue / 2)
                {
                    int calls = Math.Max(MinimumWarmupCalls, (int)Math.Ceiling(options.WarmupMilliseconds * 1e6 / (perOperation * size)));
                    plan.AddRange(Enumerable.Repeat(size, calls));
                    break;
                }
            }

            int probed = plan.IndexOf(plan[^1]) + 1;
            foreach (WorkerProcess worker in workers)
            {
                foreach (long count in plan.Skip(worker == olds[0] ? probed : 0))
                {
                    worker.Run(measurement, count);
                }
            }

            double settled = RowResult.Percentile(SettleJit(workers, measurement, plan[^1], cpu), 0.5);
            long third = Operations(options.SampleMilliseconds / 3.0, settled);
            operations[i] = Operations(options.SampleMilliseconds, olds[0].Run(measurement, third).Time(cpu));
            foreach (WorkerProcess worker in workers.Skip(1))
            {
                worker.Run(measurement, third);
            }
        }

        return operations;
    }

    // The operations that take `milliseconds` at `perOperation` ns each (at least 1, at most int.MaxValue).
    private static long Operations(double milliseconds, double perOperation) =>
        (long)Math.Clamp(Math.Round(milliseconds * 1e6 / perOperation), 1, int.MaxValue);

    // Lets the workers' JIT finish with the measurement: pauses (every worker idle, so that the
    // runtime's tiering timer and background compiler get the cores), then runs SettleCalls calls of
    // `size` operations in each worker not yet done, until, for each, a pause and its calls passed with
    // no method compiled (at least SettleRounds times round, at most JitSettleLimit). Returns the ns per
    // operation of the first worker's last calls.
    private static List<double> SettleJit(List<WorkerProcess> workers, Measurement measurement, long size, bool cpu)
    {
        var limit = Stopwatch.StartNew();
        long[] compiled = [.. workers.Select(w => w.Run(measurement, size).CompiledMethods)];
        bool[] done = new bool[workers.Count];
        var first = new List<double>();
        for (int round = 1; !done.All(d => d); round++)
        {
            if (limit.Elapsed > JitSettleLimit)
            {
                throw new WorkerException($"{workers[Array.IndexOf(done, false)].Side}: the JIT was still compiling after {JitSettleLimit.TotalSeconds:F0} s of {measurement.Name}: the machine is too busy to measure on");
            }

            Thread.Sleep(SettlePause);
            for (int k = 0; k < workers.Count; k++)
            {
                if (done[k])
                {
                    continue;
                }

                long before = compiled[k];
                var times = new List<double>();
                for (int call = 0; call < SettleCalls; call++)
                {
                    Sample sample = workers[k].Run(measurement, size);
                    times.Add(sample.Time(cpu));
                    compiled[k] = sample.CompiledMethods;
                }

                done[k] = compiled[k] == before && round >= SettleRounds;
                if (k == 0)
                {
                    first = times;
                }
            }
        }

        return first;
    }

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
