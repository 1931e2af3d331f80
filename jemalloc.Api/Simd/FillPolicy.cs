using System.Globalization;
using System.Runtime.InteropServices;
using jemalloc.Internal;
using jemalloc.Simd;

namespace jemalloc;

/// <summary>
/// Which stores write the structures' big blocks: their <c>Fill</c>, <c>VectorFill</c>,
/// <c>ParallelVectorFill</c>, create-with-value constructors, zeroed creation of a reused block,
/// and copies into and out of them. Ordinary vector stores read each cache line before writing it;
/// non-temporal (streaming) stores write whole lines past the cache. Which is faster for blocks
/// larger than the last-level cache depends on the CPU and host, so by default
/// (<see cref="Automatic"/>) the library measures both on the first big fills and keeps the faster.
/// </summary>
/// <remarks>
/// <para>
/// Automatic: writes smaller than the last-level cache (<see cref="LastLevelCacheBytes"/>, read from
/// the OS) always use ordinary stores. The first fills larger than it write alternate slices with
/// each kernel and time them; once each kernel has enough slices, the best slice of each is
/// compared, and streaming is chosen only if it is clearly faster, so noise never makes the choice.
/// The choice is made once per process (<see cref="AutomaticChoice"/>) and costs later writes
/// nothing. Until it is made, writes that do not measure (copies, clears, parallel fills) use
/// ordinary stores.
/// </para>
/// <para>
/// Explicit: a threshold of <see cref="Always"/>, <see cref="Never"/> or any size in bytes streams
/// every write of at least that size and measures nothing. Streaming needs SSE2 (every x64 CPU) or
/// Arm64; elsewhere every write uses ordinary stores. The values written are exactly those of an
/// ordinary fill or copy, for every element size and start address, whichever stores write them.
/// </para>
/// </remarks>
public static class FillPolicy
{
    /// <summary>The threshold value that lets the library choose by measuring (the default).</summary>
    public const long Automatic = -1;

    /// <summary>The threshold that streams every write large enough for streaming to apply.</summary>
    public const long Always = 0;

    /// <summary>The threshold that never streams.</summary>
    public const long Never = long.MaxValue;

    private const int Undecided = 0;
    private const int Measuring = 1;
    private const int DecidedOrdinary = 2;
    private const int DecidedNonTemporal = 3;

    // The scratch block DecideAutomaticChoice measures on, when no fill has yet: twice the cache, within these bounds.
    private const long MinimumScratchBytes = 64L << 20;
    private const long MaximumScratchBytes = 1L << 30;
    private const int MaximumScratchPasses = 16;

    private static long s_threshold = Automatic;
    private static int s_state = NonTemporalFill.IsSupported ? Undecided : DecidedOrdinary;
    // Boxed so that a reader never sees half of it; written before s_state says it is decided.
    private static object? s_choice = NonTemporalFill.IsSupported ? null : new FillChoice(false, 0, 0, 0);
    private static long s_measuringWrites;
    private static long s_refusedWrites;
    // Touched only by the thread that moved s_state to Measuring.
    private static FillMeasurement s_measurement = new();

    /// <summary>
    /// The size in bytes of a write (a whole structure's, for fills) from which it streams;
    /// <see cref="Automatic"/> (the default) lets the library choose by measuring,
    /// <see cref="Never"/> switches streaming off, <see cref="Always"/> streams everything it can.
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException">The value is negative and not <see cref="Automatic"/>.</exception>
    public static long NonTemporalThresholdBytes
    {
        get => Volatile.Read(ref s_threshold);
        set
        {
            if (value < 0 && value != Automatic)
            {
                ThrowHelper.ThrowArgumentOutOfRange(nameof(value), value, "The threshold must be zero or more, or FillPolicy.Automatic.");
            }

            Volatile.Write(ref s_threshold, value);
        }
    }

    /// <summary>The last-level cache's size in bytes as the OS (or the CPU) reports it: the size from which the automatic choice applies.</summary>
    public static long LastLevelCacheBytes => LastLevelCache.Bytes;

    /// <summary>What the automatic setting chose and the figures it measured; <see langword="null"/> until it has chosen.</summary>
    public static FillChoice? AutomaticChoice => Volatile.Read(ref s_state) >= DecidedOrdinary ? (FillChoice)Volatile.Read(ref s_choice)! : null;

    /// <summary>
    /// Makes the automatic choice now if no fill has made it yet, by measuring both kernels on a
    /// scratch block of twice the last-level cache (at least 64 MiB, at most 1 GiB, freed after),
    /// and returns it. An application can call this at start-up to keep the measuring off its first fill.
    /// </summary>
    /// <exception cref="OutOfMemoryException">The scratch block cannot be had.</exception>
    public static unsafe FillChoice DecideAutomaticChoice()
    {
        SpinWait wait = default;
        while (true)
        {
            if (AutomaticChoice is FillChoice made)
            {
                return made;
            }

            if (TryBeginMeasuring())
            {
                break;
            }

            // Another thread's fill is measuring: its fill ends soon.
            wait.SpinOnce();
        }

        nuint bytes = (nuint)Math.Clamp(2 * LastLevelCache.Bytes, MinimumScratchBytes, MaximumScratchBytes);
        byte* scratch = null;
        bool decided = false;
        try
        {
            scratch = (byte*)NativeMemory.Alloc(bytes);
            NativeMemory.Clear(scratch, bytes); // paged in before anything is timed
            for (int pass = 0; pass < MaximumScratchPasses && s_measurement.Samples < FillMeasurement.SamplesNeeded; pass++)
            {
                SimdKernels.FillMeasuring(scratch, bytes, (byte)pass, s_measurement);
            }

            decided = true;
        }
        finally
        {
            NativeMemory.Free(scratch);
            EndMeasuring(force: decided);
        }

        return AutomaticChoice!.Value;
    }

    /// <summary>
    /// Sets every element of <paramref name="destination"/> to <paramref name="value"/> with the stores
    /// this policy picks for a write of its size, as the structures' <c>Fill</c> does (so, while the
    /// automatic choice is not made, this fill may be the one that measures). For spans over any
    /// memory, such as a lease's.
    /// </summary>
    /// <typeparam name="T">The element type.</typeparam>
    public static void Fill<T>(Span<T> destination, T value)
        where T : unmanaged => SimdKernels.Fill(destination, value, SimdKernels.FillKernelFor<T>(destination.Length));

    /// <summary>
    /// One line on the policy in effect: the setting, the last-level cache size and where it was
    /// read, and the automatic choice with its figures (or that none is made yet).
    /// </summary>
    public static string Describe()
    {
        long threshold = NonTemporalThresholdBytes;
        string cache = string.Create(CultureInfo.InvariantCulture, $"last-level cache {LastLevelCache.Bytes / 1024.0 / 1024.0:0.#} MiB ({LastLevelCache.Source})");
        return threshold switch
        {
            Automatic => AutomaticChoice is FillChoice choice
                ? $"automatic, {cache}; chose {choice}"
                : $"automatic, {cache}; not chosen yet (the first fill larger than the cache measures)",
            Never => $"never stream, {cache}",
            Always => $"always stream, {cache}",
            _ => string.Create(CultureInfo.InvariantCulture, $"stream writes of {threshold:N0} bytes or more, {cache}"),
        };
    }

    /// <summary>
    /// The kernel for one write of <paramref name="totalBytes"/> (a whole structure's, for fills).
    /// <see cref="FillKernel.Undecided"/> only when <paramref name="mayMeasure"/>: the write may then
    /// measure (see <see cref="SimdKernels.Fill{T}(Span{T}, T, FillKernel)"/>); otherwise an undecided
    /// choice reads as ordinary.
    /// </summary>
    internal static FillKernel KernelFor(nuint totalBytes, bool mayMeasure)
    {
        long threshold = Volatile.Read(ref s_threshold);
        if (threshold != Automatic)
        {
            return NonTemporalFill.IsSupported && threshold != Never && (ulong)totalBytes >= (ulong)threshold ? FillKernel.NonTemporal : FillKernel.Ordinary;
        }

        if ((ulong)totalBytes < (ulong)LastLevelCache.Bytes)
        {
            return FillKernel.Ordinary;
        }

        FillKernel kernel = Decided();
        return kernel == FillKernel.Undecided && !mayMeasure ? FillKernel.Ordinary : kernel;
    }

    /// <summary>The automatic choice, or <see cref="FillKernel.Undecided"/> while none is made.</summary>
    internal static FillKernel Decided() => Volatile.Read(ref s_state) switch
    {
        DecidedOrdinary => FillKernel.Ordinary,
        DecidedNonTemporal => FillKernel.NonTemporal,
        _ => FillKernel.Undecided,
    };

    /// <summary>
    /// Takes the measurement for the calling thread if no choice is made and no other thread is
    /// measuring; the caller then adds to <see cref="Measurement"/> and must call <see cref="EndMeasuring"/>.
    /// </summary>
    internal static bool TryBeginMeasuring()
    {
        if (Interlocked.CompareExchange(ref s_state, Measuring, Undecided) == Undecided)
        {
            Interlocked.Increment(ref s_measuringWrites);
            return true;
        }

        Interlocked.Increment(ref s_refusedWrites);
        return false;
    }

    /// <summary>How many writes took the measurement (a count for tests; it grows only while no choice is made).</summary>
    internal static long MeasuringWrites => Volatile.Read(ref s_measuringWrites);

    /// <summary>How many writes found the measurement taken by another thread (a count for tests, as <see cref="MeasuringWrites"/>).</summary>
    internal static long RefusedWrites => Volatile.Read(ref s_refusedWrites);

    /// <summary>The evidence so far; only for the thread that holds the measurement.</summary>
    internal static FillMeasurement Measurement => s_measurement;

    /// <summary>
    /// Gives the measurement back: the choice is made if the evidence suffices (or, with
    /// <paramref name="force"/>, from whatever there is), else the next big fill measures on.
    /// </summary>
    internal static void EndMeasuring(bool force = false)
    {
        if (s_measurement.TryDecide(force, out FillChoice choice))
        {
            Volatile.Write(ref s_choice, choice);
            Volatile.Write(ref s_state, choice.NonTemporal ? DecidedNonTemporal : DecidedOrdinary);
        }
        else
        {
            Volatile.Write(ref s_state, Undecided);
        }
    }

    /// <summary>Forgets the automatic choice and its evidence (tests only: the choice is otherwise made once per process).</summary>
    internal static void ForgetAutomaticChoiceForTests()
    {
        if (!NonTemporalFill.IsSupported)
        {
            return;
        }

        s_measurement = new FillMeasurement();
        Volatile.Write(ref s_choice, null);
        Volatile.Write(ref s_state, Undecided);
    }
}
