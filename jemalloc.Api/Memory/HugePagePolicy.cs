using System.Globalization;
using System.Runtime.CompilerServices;
using jemalloc.Configuration;
using jemalloc.HugePages;
using jemalloc.Internal;
using jemalloc.Memory;

namespace jemalloc;

/// <summary>
/// When <see cref="HugeArray{T}"/> and <see cref="SafeArray{T}"/> ask for transparent huge pages by
/// themselves: created without <see cref="AllocationOptions"/>, an array of at least
/// <see cref="ThresholdBytes"/> gets <see cref="AllocationOptions.WithHugePages"/> if the kernel
/// offers huge pages and <see cref="Selection"/> chooses them: by default
/// (<see cref="HugePageSelection.Measured"/>) the library measures on this host, once per process,
/// whether huge pages make first touching fresh memory dearer, and uses them only where they do not.
/// Explicit options are always used as given.
/// </summary>
/// <remarks>
/// <para>
/// Why measured: creating and filling freshly allocated memory is dominated by page faults, one per
/// 4 KiB page or one per 2 MiB huge page; on many hosts huge pages make that cheaper (and random reads
/// miss the TLB less), but on some (virtual machines among them) the kernel clears a fresh huge page
/// at a far higher cost per byte, and huge pages make big loads slower. The first array that would ask
/// for them (or <see cref="Measure"/>) writes two fresh probes of 64 MiB, one in 4 KiB pages and one in
/// huge pages, in turns, and huge pages are chosen unless their first touch costs more than 10% over
/// the 4 KiB pages'. <see cref="Measurement"/> reads the figures and the reason;
/// <c>jembench info</c> prints them. Where the OS offers no huge pages, nothing is measured.
/// </para>
/// <para>
/// The cost of huge pages: only whole 2 MiB pages inside the array are advised, so resident memory
/// does not grow past the array, but each first touch of a huge page makes all of its 2 MiB resident.
/// An array that is allocated big and then touched only here and there uses more memory with huge
/// pages: raise <see cref="ThresholdBytes"/>, or pass <see cref="AllocationOptions.Default"/>, for such arrays.
/// </para>
/// </remarks>
public static class HugePagePolicy
{
    /// <summary>The default threshold: one 2 MiB huge page.</summary>
    public const long DefaultThresholdBytes = 2L << 20;

    private static readonly Lazy<bool> KernelOffersHugePages = new(() => HugePageProbe.IsAvailable);
    private static readonly object s_measuring = new();
    private static long s_thresholdBytes = DefaultThresholdBytes;
    // An unset variable is the default; a value not understood is the default too (a static
    // initializer cannot refuse it), and the descriptions say it was ignored.
    private static readonly StartupVariable<HugePageSelection> s_variable =
        StartupVariable<HugePageSelection>.Read(HugePageVariables.Selection, ParseSelection, HugePageSelection.Measured, "measured");
    private static int s_selection = (int)s_variable.Value;
    // The measurement, boxed so that a reader never sees half of it; null until made.
    private static object? s_measurement;
    private static long s_measurements;

    /// <summary>
    /// The size from which arrays created without options ask for huge pages;
    /// <see cref="long.MaxValue"/> switches the default off.
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException">The value is negative.</exception>
    public static long ThresholdBytes
    {
        get => Volatile.Read(ref s_thresholdBytes);
        set
        {
            ArgumentOutOfRangeException.ThrowIfNegative(value);
            Volatile.Write(ref s_thresholdBytes, value);
        }
    }

    /// <summary>
    /// How arrays created without options from <see cref="ThresholdBytes"/> up decide on huge pages:
    /// <see cref="HugePageSelection.Measured"/> (the default, or the environment variable
    /// <c>JEMALLOC_NET_HUGE_PAGES</c> read at startup: <c>measured</c>, <c>always</c> or <c>never</c>),
    /// <see cref="HugePageSelection.Always"/> or <see cref="HugePageSelection.Never"/>.
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException">The value is not one of <see cref="HugePageSelection"/>'s.</exception>
    public static HugePageSelection Selection
    {
        get => (HugePageSelection)Volatile.Read(ref s_selection);
        set
        {
            if (value is not (HugePageSelection.Measured or HugePageSelection.Always or HugePageSelection.Never))
            {
                ThrowHelper.ThrowArgumentOutOfRange(nameof(value), value, "The selection must be HugePageSelection.Measured, Always or Never.");
            }

            Volatile.Write(ref s_selection, (int)value);
        }
    }

    /// <summary>
    /// The measurement the measured selection chooses by, or <see langword="null"/> until one is made
    /// (by the first array created without options from the threshold up under the measured
    /// selection, or by <see cref="Measure"/>).
    /// </summary>
    public static HugePageMeasurement? Measurement => Volatile.Read(ref s_measurement) is HugePageMeasurement made ? made : null;

    /// <summary>
    /// Makes the measurement if it is not made yet (whatever <see cref="Selection"/> is) and returns it:
    /// the first-touch cost of fresh memory with 4 KiB pages and with huge pages on this host, the
    /// choice and why. Made once per process; threads that ask meanwhile wait for it. An application
    /// can call this at start-up to keep the measuring (two 64 MiB probes, each written once) off its first big array.
    /// Where the OS offers no huge pages, nothing is measured and the choice is 4 KiB pages.
    /// </summary>
    public static HugePageMeasurement Measure()
    {
        if (Volatile.Read(ref s_measurement) is HugePageMeasurement made)
        {
            return made;
        }

        lock (s_measuring)
        {
            if (Volatile.Read(ref s_measurement) is HugePageMeasurement again)
            {
                return again;
            }

            TransparentHugePageMode mode = HugePageProbe.Mode;
            HugePageMeasurement measured = HugePageProbe.IsAvailable
                ? FirstTouchProbe.Measure(mode)
                : HugePageMeasurement.NotMeasured(mode, SystemHugePageSource.Instance.Unsupported
                    ?? $"the kernel offers no transparent huge pages (mode {mode.ToString().ToLowerInvariant()}).");
            Interlocked.Increment(ref s_measurements);
            Volatile.Write(ref s_measurement, measured);
            return measured;
        }
    }

    /// <summary>
    /// One line on the policy in effect: the selection, the threshold, and for the measured selection
    /// the measurement with its figures (or that none is made yet).
    /// </summary>
    public static string Describe()
    {
        string threshold = ThresholdBytes == long.MaxValue
            ? "threshold never"
            : string.Create(CultureInfo.InvariantCulture, $"from {ThresholdBytes / 1048576.0:0.##} MiB");
        return Selection switch
        {
            HugePageSelection.Always => $"always huge pages {threshold}, not measured",
            HugePageSelection.Never => "never huge pages by default",
            _ => $"measured{s_variable.Note}, {threshold}: " + (Measurement is HugePageMeasurement made
                ? made.Reason
                : "not measured yet (the first array created without options from the threshold up measures)"),
        };
    }

    /// <summary>The options an array of <paramref name="length"/> elements of <typeparamref name="T"/> gets when created without any.</summary>
    public static AllocationOptions DefaultFor<T>(long length)
        where T : unmanaged
    {
        int elementSize = Unsafe.SizeOf<T>();
        long bytes = length <= 0 ? 0 : length > long.MaxValue / elementSize ? long.MaxValue : length * elementSize;
        return DefaultForBytes(bytes, KernelOffersHugePages.Value);
    }

    /// <summary>The options of a structure, writer block or pool block of <paramref name="bytes"/> created without any: the one default.</summary>
    internal static AllocationOptions DefaultForSize(nuint bytes) =>
        DefaultForBytes(bytes > long.MaxValue ? long.MaxValue : (long)bytes, KernelOffersHugePages.Value);

    /// <summary>
    /// Whether an allocation of <paramref name="size"/> bytes whose options ask for huge pages gets them
    /// (2 MiB alignment and the advice): only when it can hold a whole huge page. Every allocation path
    /// (structures, writer, pool, arenas) asks here.
    /// </summary>
    internal static bool Advises(nuint size, bool asked) => asked && size >= HugePageAdvisor.HugePageSize;

    /// <summary>The default options for <paramref name="bytes"/>; measures (once) only when the size and the kernel call for huge pages and the selection is measured.</summary>
    internal static AllocationOptions DefaultForBytes(long bytes, bool kernelOffersHugePages) =>
        kernelOffersHugePages && bytes > 0 && bytes >= ThresholdBytes && SelectsHugePages() ? AllocationOptions.WithHugePages : AllocationOptions.Default;

    /// <summary>What the process read from <c>JEMALLOC_NET_HUGE_PAGES</c> at startup, and its note if the value was not understood.</summary>
    internal static StartupVariable<HugePageSelection> SelectionVariable => s_variable;

    /// <summary>How many measurements this process made (a count for tests: one, unless a test forgot the measurement).</summary>
    internal static long Measurements => Volatile.Read(ref s_measurements);

    /// <summary>Forgets the measurement (tests only: it is otherwise made once per process).</summary>
    internal static void ForgetMeasurementForTests()
    {
        lock (s_measuring)
        {
            Volatile.Write(ref s_measurement, null);
        }
    }

    /// <summary>The selection named by <paramref name="text"/> (<c>measured</c>, <c>always</c>, <c>never</c>, any case, blanks around), or null.</summary>
    internal static HugePageSelection? ParseSelection(string? text) => text?.Trim().ToLowerInvariant() switch
    {
        "measured" => HugePageSelection.Measured,
        "always" => HugePageSelection.Always,
        "never" => HugePageSelection.Never,
        _ => null,
    };

    private static bool SelectsHugePages() => Selection switch
    {
        HugePageSelection.Always => true,
        HugePageSelection.Never => false,
        _ => Measure().HugePages,
    };
}
