using System.Diagnostics;
using System.Globalization;

namespace jemalloc.PerfCompare;

/// <summary>
/// The driver's end of one worker process: started with <c>dotnet ASSEMBLY worker</c> (the build of
/// one side), asked for one measurement at a time. Only one worker runs at any moment; the others
/// wait on their input.
/// </summary>
internal sealed class WorkerProcess : IDisposable
{
    private readonly Process _process;

    private WorkerProcess(Process process, string side, string description)
    {
        _process = process;
        Side = side;
        Description = description;
    }

    /// <summary>"old" or "new", and which process of that side.</summary>
    internal string Side { get; }

    /// <summary>The library the worker loaded, as it reported it.</summary>
    internal string Description { get; }

    /// <summary>Starts a worker of <paramref name="assembly"/> and waits until it has set up its measurements.</summary>
    /// <exception cref="WorkerException">It could not be started or did not report ready.</exception>
    internal static WorkerProcess Start(string side, string assembly)
    {
        var start = new ProcessStartInfo(DotnetHost())
        {
            RedirectStandardInput = true,
            RedirectStandardOutput = true,
            UseShellExecute = false,
        };
        start.ArgumentList.Add(assembly);
        start.ArgumentList.Add("worker");
        Process process = Process.Start(start) ?? throw new WorkerException($"{side}: could not start {assembly}");
        string? ready = process.StandardOutput.ReadLine();
        if (ready is null || !ready.StartsWith("ready\t", StringComparison.Ordinal))
        {
            process.WaitForExit(10_000);
            string exit = process.HasExited ? $"exit code {process.ExitCode}" : "still running";
            process.Kill();
            process.Dispose();
            throw new WorkerException($"{side}: the worker {assembly} did not start ({exit}; said: {ready ?? "nothing"})");
        }

        return new WorkerProcess(process, side, ready["ready\t".Length..]);
    }

    /// <summary>Runs <paramref name="operations"/> operations of <paramref name="measurement"/> and returns what the worker reports of the run.</summary>
    /// <exception cref="ResultCheckException">The worker's check of the result failed.</exception>
    /// <exception cref="WorkerException">The worker failed or stopped.</exception>
    internal Sample Run(Measurement measurement, long operations)
    {
        Send(string.Create(CultureInfo.InvariantCulture, $"run {measurement.Name} {operations}"));
        return Receive(measurement);
    }

    /// <summary>
    /// Starts the worker's warm-up of <paramref name="measurement"/>: <paramref name="calls"/> runs of
    /// <paramref name="operations"/> operations, then more until its JIT is done with it. It runs while
    /// the driver starts others; <see cref="Receive"/> waits for its end and returns a run after it.
    /// </summary>
    internal void StartWarmUp(Measurement measurement, long operations, int calls) =>
        Send(string.Create(CultureInfo.InvariantCulture, $"warm {measurement.Name} {operations} {calls}"));

    /// <summary>Waits for the worker's answer to the request about <paramref name="measurement"/>.</summary>
    /// <exception cref="ResultCheckException">The worker's check of the result failed.</exception>
    /// <exception cref="WorkerException">The worker failed or stopped.</exception>
    internal Sample Receive(Measurement measurement)
    {
        string answer = _process.StandardOutput.ReadLine() ?? throw new WorkerException($"{Side}: the worker stopped during {measurement.Name}");
        if (answer.Split(' ') is ["ok", string wallText, string cpuText, string jittedText]
            && double.TryParse(wallText, NumberStyles.Float, CultureInfo.InvariantCulture, out double wall)
            && double.TryParse(cpuText, NumberStyles.Float, CultureInfo.InvariantCulture, out double cpu)
            && long.TryParse(jittedText, NumberStyles.None, CultureInfo.InvariantCulture, out long jitted))
        {
            return new Sample(wall, cpu, jitted);
        }

        if (answer.StartsWith("wrong ", StringComparison.Ordinal))
        {
            throw new ResultCheckException($"{Side} build: {answer["wrong ".Length..]}");
        }

        throw new WorkerException($"{Side}: {measurement.Name} failed: {answer}");
    }

    private void Send(string request)
    {
        _process.StandardInput.WriteLine(request);
        _process.StandardInput.Flush();
    }

    public void Dispose()
    {
        try
        {
            if (!_process.HasExited)
            {
                _process.StandardInput.WriteLine("quit");
                _process.StandardInput.Close();
                if (!_process.WaitForExit(30_000))
                {
                    _process.Kill();
                }
            }
        }
        catch (IOException)
        {
            // It ended on its own (its input is gone).
        }
        finally
        {
            _process.Dispose();
        }
    }

    // The dotnet host this driver runs under (started as "dotnet jemalloc.PerfCompare.dll"), else the one on PATH.
    private static string DotnetHost()
    {
        string? self = Environment.ProcessPath;
        return self is not null && Path.GetFileNameWithoutExtension(self) == "dotnet" ? self : "dotnet";
    }
}
