using System.Globalization;
using jemalloc.Internal;

namespace jemalloc.Mallctl;

/// <summary>
/// The range jemalloc accepts for a decay time (<c>*_decay_ms</c>), checked before the write: jemalloc
/// refuses a value outside it with a bare <c>EFAULT</c>, which names neither the value nor the range.
/// </summary>
internal static class DecayTime
{
    /// <summary>
    /// jemalloc's largest decay time in milliseconds: its clock holds at most <c>NSTIME_SEC_MAX</c>
    /// (18,446,744,072) seconds (<c>arena_decay_ms_valid</c>), and a <c>ssize_t</c> must hold the value.
    /// </summary>
    internal static long MaxMilliseconds { get; } = Math.Min(18_446_744_072_000L, (long)nint.MaxValue);

    /// <summary>Returns <paramref name="milliseconds"/> as jemalloc's <c>ssize_t</c> once it is in range.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="milliseconds"/> is less than -1 or more than <see cref="MaxMilliseconds"/>.</exception>
    internal static nint Check(long milliseconds, string paramName)
    {
        if (milliseconds < -1 || milliseconds > MaxMilliseconds)
        {
            ThrowOutOfRange(milliseconds, paramName);
        }

        return (nint)milliseconds;
    }

    private static void ThrowOutOfRange(long milliseconds, string paramName) =>
        ThrowHelper.ThrowArgumentOutOfRange(paramName, milliseconds, string.Create(CultureInfo.InvariantCulture,
            $"A decay time is -1 (keep unused pages), 0 (give them back at once) or up to {MaxMilliseconds} milliseconds (jemalloc's limit); {milliseconds} is not."));
}
