using System.Globalization;

namespace jemalloc.PerfCompare;

/// <summary>The host's one-minute load average (<c>/proc/loadavg</c>), read between rounds: how busy the machine was while it measured.</summary>
internal sealed class LoadAverage
{
    private readonly List<double> _samples = [];

    /// <summary>Reads the load now and keeps it; nothing where the host gives none.</summary>
    internal void Sample()
    {
        try
        {
            string text = File.ReadAllText("/proc/loadavg");
            _samples.Add(double.Parse(text.AsSpan(0, text.IndexOf(' ', StringComparison.Ordinal)), CultureInfo.InvariantCulture));
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or FormatException or ArgumentOutOfRangeException)
        {
        }
    }

    /// <summary>The samples as "first, min-max, last", or null if there are none.</summary>
    internal string? Describe() => _samples.Count == 0
        ? null
        : string.Create(CultureInfo.InvariantCulture, $"{_samples[0]:F2} at the start, {_samples.Min():F2} to {_samples.Max():F2} during the rounds, {_samples[^1]:F2} at the end");

    /// <summary>The highest sample, or 0.</summary>
    internal double Max => _samples.Count == 0 ? 0 : _samples.Max();
}
