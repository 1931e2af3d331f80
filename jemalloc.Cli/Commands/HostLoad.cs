using System.Globalization;

namespace jemalloc.Cli.Commands;

/// <summary>
/// The host's one-minute load average (Linux's <c>/proc/loadavg</c>), sampled while a benchmark's sides
/// run, so a table taken while other work competed for the cores says so. Elsewhere it samples nothing.
/// </summary>
public sealed class HostLoad : IDisposable
{
    private static readonly TimeSpan Interval = TimeSpan.FromSeconds(2);
    private readonly List<double> _samples = [];
    private readonly Lock _lock = new();
    private readonly Timer _timer;

    /// <summary>Starts sampling now and every two seconds until disposed.</summary>
    internal HostLoad() => _timer = new Timer(_ => Sample(), null, TimeSpan.Zero, Interval);

    /// <summary>The one-minute load average now, or null where the host gives none.</summary>
    internal static double? Read()
    {
        try
        {
            string text = File.ReadAllText("/proc/loadavg");
            return double.Parse(text.AsSpan(0, text.IndexOf(' ', StringComparison.Ordinal)), CultureInfo.InvariantCulture);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or FormatException or ArgumentOutOfRangeException)
        {
            return null;
        }
    }

    /// <summary>Prints the samples' range and, if the load passed the core count, a warning.</summary>
    internal void Report(TextWriter output, string verb)
    {
        Sample();
        double[] samples;
        lock (_lock)
        {
            samples = [.. _samples];
        }

        foreach (string line in Describe(verb, samples, Environment.ProcessorCount))
        {
            output.WriteLine(line);
        }
    }

    /// <summary>The report's lines for <paramref name="samples"/> of the load on <paramref name="cores"/> cores.</summary>
    public static IEnumerable<string> Describe(string verb, IReadOnlyList<double> samples, int cores)
    {
        ArgumentNullException.ThrowIfNull(samples);
        if (samples.Count == 0)
        {
            yield return $"{verb}: load average: not available on this platform ({cores} cores).";
            yield break;
        }

        yield return string.Create(CultureInfo.InvariantCulture,
            $"{verb}: load average (1 min) during the run: {samples.Min():F2} to {samples.Max():F2} over {samples.Count} samples, on {cores} cores.");
        if (samples.Max() > cores)
        {
            yield return string.Create(CultureInfo.InvariantCulture,
                $"{verb}: WARNING: the load average reached {samples.Max():F2}, above the {cores} cores: other work competed with the sides, which costs the managed sides' collector most. Compare ratios from a quiet run.");
        }
    }

    /// <summary>Stops sampling.</summary>
    public void Dispose() => _timer.Dispose();

    private void Sample()
    {
        if (Read() is double load)
        {
            lock (_lock)
            {
                _samples.Add(load);
            }
        }
    }
}
