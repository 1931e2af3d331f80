using System.Globalization;
using System.Runtime.CompilerServices;
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
/// the OS) always use ordinary stores. Larger writes fall in one of three size bands, from the cache
/// size C: [C, 4C), [4C, 16C) and 16C or more, since on some hosts streaming wins for blocks a few
/// times the cache and loses for far larger ones. In each band, the first fills are written by
/// each kernel in turn and timed whole; once each kernel has written enough of them, the best fill
/// of each is compared, and streaming is chosen only if it is clearly faster, so noise never makes the
/// choice. Each band's choice is made once per process (<see cref="AutomaticChoices"/>) and costs
/// later writes nothing. Until a band's choice is made, writes in it that do not measure (copies,
/// clears, parallel fills) use ordinary stores.
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

    /// <summary>The number of size bands the automatic setting chooses for.</summary>
    internal const int BandCount = 3;

    // Each band is this many times wider than the one before it, the first starting at the cache size.
    private const int BandFactor = 4;

    private const int Undecided = 0;
    private const int Measuring = 1;
    private const int DecidedOrdinary = 2;
    private const int DecidedNonTemporal = 3;

    // DecideAutomaticChoices measures each band on fills a little (an eighth) larger than the band's
    // smallest write: within the band, and as small as that allows, since every fill is written
    // whole, many times. A few passes more than the measurement needs, in case the clock cannot
    // time some (a decision is then forced from what there is).
    private const int MaximumScratchPasses = (2 * FillMeasurement.SamplesNeeded) + 4;

    private static long s_threshold = Automatic;
    // Per band. A band's choice is boxed so that a reader never sees half of it; written before its state says it is decided.
    private static readonly int[] s_state = NewStates();
    private static readonly object?[] s_choice = new object?[BandCount];
    // Touched only by the thread that moved the band's state to Measuring.
    private static readonly FillMeasurement[] s_measurement = [new(), new(), new()];
    private static long s_measuringWrites;
    private static long s_refusedWrites;

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

    /// <summary>
    /// The automatic setting's choices made so far, one per size band that has chosen, smallest band
    /// first, each with the figures it measured; empty until the first band has chosen.
    /// </summary>
    public static IReadOnlyList<FillChoice> AutomaticChoices
    {
        get
        {
            var made = new List<FillChoice>(BandCount);
            for (int band = 0; band < BandCount; band++)
            {
                if (ChoiceOf(band) is FillChoice choice)
                {
                    made.Add(choice);
                }
            }

            return made;
        }
    }

    /// <summary>
    /// The automatic choice that applies to a write of <paramref name="writeBytes"/> bytes (a whole
    /// structure's, for fills); <see langword="null"/> when the write is smaller than the last-level
    /// cache (such writes always use ordinary stores) or its size band has not chosen yet.
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="writeBytes"/> is negative.</exception>
    public static FillChoice? AutomaticChoiceFor(long writeBytes)
    {
        if (writeBytes < 0)
        {
            ThrowHelper.ThrowArgumentOutOfRange(nameof(writeBytes), writeBytes, "A write's size cannot be negative.");
        }

        int band = BandOf((ulong)writeBytes);
        return band < 0 ? null : ChoiceOf(band);
    }

    /// <summary>
    /// Makes the automatic choice of every size band no fill has made it for yet, by measuring both
    /// kernels on fills of a scratch block (freed after), and returns the choices, smallest band
    /// first. An application can call this at start-up to keep the measuring off its first big fills.
    /// The scratch block is a little larger than the last band's smallest write (18 times the
    /// last-level cache), and each band's fills write all or part of it many times over.
    /// </summary>
    /// <exception cref="OutOfMemoryException">The scratch block cannot be had.</exception>
    public static unsafe IReadOnlyList<FillChoice> DecideAutomaticChoices()
    {
        long scratchBytes = 0;
        for (int band = 0; band < BandCount; band++)
        {
            if (ChoiceOf(band) is null)
            {
                scratchBytes = ScratchBytes(band);
            }
        }

        if (scratchBytes == 0)
        {
            return AutomaticChoices;
        }

        ulong* scratch = (ulong*)NativeMemory.Alloc((nuint)scratchBytes);
        try
        {
            NativeMemory.Clear(scratch, (nuint)scratchBytes); // paged in once, before anything is timed
            for (int band = 0; band < BandCount; band++)
            {
                DecideBand(band, scratch);
            }
        }
        finally
        {
            NativeMemory.Free(scratch);
        }

        return AutomaticChoices;
    }

    /// <summary>
    /// Sets every element of <paramref name="destination"/> to <paramref name="value"/> with the stores
    /// this policy picks for a write of its size, as the structures' <c>Fill</c> does (so, while the
    /// automatic choice is not made, this fill may be the one that measures). For spans over any
    /// memory, such as a lease's.
    /// </summary>
    /// <typeparam name="T">The element type.</typeparam>
    public static void Fill<T>(Span<T> destination, T value)
        where T : unmanaged => SimdKernels.Fill(destination, value, SimdKernels.FillPlanFor<T>(destination.Length));

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
            Automatic => $"automatic, {cache}; {DescribeBands()}",
            Never => $"never stream, {cache}",
            Always => $"always stream, {cache}",
            _ => string.Create(CultureInfo.InvariantCulture, $"stream writes of {threshold:N0} bytes or more, {cache}"),
        };
    }

    /// <summary>
    /// The kernel for one write of <paramref name="totalBytes"/> (a whole structure's, for fills).
    /// <see cref="FillKernel.Undecided"/> only when <paramref name="mayMeasure"/>: the write may then
    /// measure (see <see cref="SimdKernels.Fill{T}(Span{T}, T, FillPlan)"/>); otherwise an undecided
    /// choice reads as ordinary.
    /// </summary>
    internal static FillKernel KernelFor(nuint totalBytes, bool mayMeasure)
    {
        FillPlan plan = PlanFor(totalBytes);
        return mayMeasure ? plan.Kernel : plan.WithoutMeasuring().Kernel;
    }

    /// <summary>The plan for one write of <paramref name="totalBytes"/>: its kernel (maybe undecided) and its band.</summary>
    /// <remarks>
    /// Never inlined: once per write, so the call costs nothing beside the write; inlined into a
    /// user's loop that creates structures with a value and disposes them, .NET 10's JIT hung (and
    /// grew without bound) recompiling that loop on stack replacement with profile-guided
    /// optimization on. The adversarial scenario <c>jit-create-with-value-loops</c> keeps that shape.
    /// </remarks>
    [MethodImpl(MethodImplOptions.NoInlining)]
    internal static FillPlan PlanFor(nuint totalBytes)
    {
        long threshold = Volatile.Read(ref s_threshold);
        if (threshold != Automatic)
        {
            return new(NonTemporalFill.IsSupported && threshold != Never && (ulong)totalBytes >= (ulong)threshold ? FillKernel.NonTemporal : FillKernel.Ordinary, -1);
        }

        int band = BandOf(totalBytes);
        return band < 0 ? new(FillKernel.Ordinary, -1) : new(Decided(band), band);
    }

    /// <summary>The size band of a write of <paramref name="totalBytes"/>: -1 below the last-level cache, else 0 to <see cref="BandCount"/> - 1.</summary>
    internal static int BandOf(ulong totalBytes)
    {
        ulong from = (ulong)LastLevelCache.Bytes;
        if (totalBytes < from)
        {
            return -1;
        }

        ulong times = totalBytes / from;
        return times >= BandFactor * BandFactor ? 2 : times >= BandFactor ? 1 : 0;
    }

    /// <summary>The smallest write of <paramref name="band"/>, in bytes.</summary>
    internal static long BandStartBytes(int band)
    {
        long start = LastLevelCache.Bytes;
        for (int i = 0; i < band; i++)
        {
            start *= BandFactor;
        }

        return start;
    }

    /// <summary>The first write size past <paramref name="band"/>, in bytes; <see cref="long.MaxValue"/> for the last.</summary>
    internal static long BandEndBytes(int band) => band == BandCount - 1 ? long.MaxValue : BandStartBytes(band + 1);

    /// <summary>The automatic choice of <paramref name="band"/>, or <see cref="FillKernel.Undecided"/> while none is made.</summary>
    internal static FillKernel Decided(int band) => Volatile.Read(ref s_state[band]) switch
    {
        DecidedOrdinary => FillKernel.Ordinary,
        DecidedNonTemporal => FillKernel.NonTemporal,
        _ => FillKernel.Undecided,
    };

    /// <summary>
    /// Takes <paramref name="band"/>'s measurement for the calling thread if its choice is not made
    /// and no other thread is measuring it; the caller then adds to <see cref="Measurement"/> and
    /// must call <see cref="EndMeasuring"/>.
    /// </summary>
    internal static bool TryBeginMeasuring(int band)
    {
        if (Interlocked.CompareExchange(ref s_state[band], Measuring, Undecided) == Undecided)
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

    /// <summary><paramref name="band"/>'s evidence so far; only for the thread that holds its measurement.</summary>
    internal static FillMeasurement Measurement(int band) => s_measurement[band];

    /// <summary>
    /// Gives <paramref name="band"/>'s measurement back: its choice is made if the evidence suffices
    /// (or, with <paramref name="force"/>, from whatever there is), else the band's next big fill measures on.
    /// </summary>
    internal static void EndMeasuring(int band, bool force = false)
    {
        if (s_measurement[band].TryDecide(force, out FillChoice measured))
        {
            FillChoice choice = measured with { FromBytes = BandStartBytes(band), ToBytes = BandEndBytes(band) };
            Volatile.Write(ref s_choice[band], choice);
            Volatile.Write(ref s_state[band], choice.NonTemporal ? DecidedNonTemporal : DecidedOrdinary);
        }
        else
        {
            Volatile.Write(ref s_state[band], Undecided);
        }
    }

    /// <summary>Forgets every automatic choice and its evidence (tests only: a choice is otherwise made once per process).</summary>
    internal static void ForgetAutomaticChoicesForTests()
    {
        if (!NonTemporalFill.IsSupported)
        {
            return;
        }

        for (int band = 0; band < BandCount; band++)
        {
            s_measurement[band] = new FillMeasurement();
            Volatile.Write(ref s_choice[band], null);
            Volatile.Write(ref s_state[band], Undecided);
        }
    }

    private static long ScratchBytes(int band) => BandStartBytes(band) / 8 * 9;

    private static int[] NewStates()
    {
        int[] states = new int[BandCount];
        states.AsSpan().Fill(NonTemporalFill.IsSupported ? Undecided : DecidedOrdinary);
        return states;
    }

    private static FillChoice? ChoiceOf(int band)
    {
        if (Volatile.Read(ref s_state[band]) < DecidedOrdinary)
        {
            return null;
        }

        // Set before the state, except where the CPU cannot stream: then every band is ordinary, unmeasured.
        return Volatile.Read(ref s_choice[band]) is FillChoice choice
            ? choice
            : new FillChoice(BandStartBytes(band), BandEndBytes(band), false, 0, 0, 0);
    }

    private static string DescribeBands()
    {
        var parts = new List<string>(BandCount);
        for (int band = 0; band < BandCount; band++)
        {
            parts.Add(ChoiceOf(band) is FillChoice choice
                ? choice.ToString()
                : $"{FillChoice.DescribeBand(BandStartBytes(band), BandEndBytes(band))}: not chosen yet (the first fills of this size measure)");
        }

        return string.Join("; ", parts);
    }

    // Measures the band on the first ScratchBytes(band) bytes of the scratch block, in ulong elements
    // (what the structures fill most), unless a fill has chosen for it or is measuring it meanwhile.
    private static unsafe void DecideBand(int band, ulong* scratch)
    {
        SpinWait wait = default;
        while (true)
        {
            if (ChoiceOf(band) is not null)
            {
                return;
            }

            if (TryBeginMeasuring(band))
            {
                break;
            }

            // Another thread's fill is measuring this band: its fill ends soon.
            wait.SpinOnce();
        }

        nuint count = (nuint)(ScratchBytes(band) / sizeof(ulong));
        bool decided = false;
        try
        {
            FillMeasurement measurement = s_measurement[band];
            for (int pass = 0; pass < MaximumScratchPasses && measurement.Samples < FillMeasurement.SamplesNeeded; pass++)
            {
                SimdKernels.FillMeasuring(scratch, count, (ulong)pass, measurement);
            }

            decided = true;
        }
        finally
        {
            EndMeasuring(band, force: decided);
        }
    }
}
