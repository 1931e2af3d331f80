using System.Runtime.ExceptionServices;
using System.Runtime.InteropServices;
using jemalloc.Interop;

namespace jemalloc;

public static unsafe partial class Jem
{
    /// <summary>The option letters <c>malloc_stats_print</c> understands.</summary>
    private const string StatsOptionLetters = "Jgmdablxeh";

    /// <summary>
    /// Reads jemalloc's global memory statistics. jemalloc caches them: this writes <c>epoch</c>
    /// first so the numbers are current. Refreshing takes locks and walks all arenas: do not call
    /// it on a hot path.
    /// </summary>
    /// <param name="exact">
    /// Also flush the calling thread's cache first (<c>thread.tcache.flush</c>), so memory this
    /// thread freed but still caches no longer counts as allocated. Other threads' caches are not
    /// flushed.
    /// </param>
    /// <exception cref="MallctlException">jemalloc was built without statistics (<c>config.stats</c> false).</exception>
    /// <exception cref="JemLibraryException">The native library could not be loaded.</exception>
    public static JemStatistics GetStatistics(bool exact = false)
    {
        if (exact)
        {
            MallctlKeys.Thread.TcacheFlush.Run();
        }

        RefreshStatistics();
        return new JemStatistics(
            MallctlKeys.Stats.Allocated.Get(),
            MallctlKeys.Stats.Active.Get(),
            MallctlKeys.Stats.Metadata.Get(),
            MallctlKeys.Stats.Resident.Get(),
            MallctlKeys.Stats.Mapped.Get(),
            MallctlKeys.Stats.Retained.Get());
    }

    /// <summary>Writes <c>epoch</c>, which makes jemalloc refresh the statistics it reports through <c>stats.*</c>.</summary>
    /// <returns>The new epoch.</returns>
    /// <exception cref="JemLibraryException">The native library could not be loaded.</exception>
    public static ulong RefreshStatistics() => ExchangeMallctl<ulong>(MallctlKeys.Epoch.Name, 1);

    /// <summary>
    /// Returns jemalloc's full statistics report (<c>malloc_stats_print</c>) as text.
    /// </summary>
    /// <param name="options">
    /// jemalloc's option letters, each leaving a section out: <c>g</c> general information,
    /// <c>m</c> merged arena statistics, <c>d</c> destroyed arenas, <c>a</c> per-arena statistics,
    /// <c>b</c> size-class bins, <c>l</c> large size classes, <c>x</c> mutexes, <c>e</c> extents,
    /// <c>h</c> the huge page allocator; <c>J</c> gives JSON (see <see cref="GetStatsJson(string?)"/>).
    /// </param>
    /// <exception cref="ArgumentException"><paramref name="options"/> has a letter jemalloc does not know.</exception>
    /// <exception cref="JemLibraryException">The native library could not be loaded.</exception>
    public static string GetStatsText(string? options = null)
    {
        ValidateStatsOptions(options);
        var capture = new StatsTextCapture();
        GCHandle handle = GCHandle.Alloc(capture);
        try
        {
            MallocStatsPrint(&StatsTextCapture.Append, (void*)GCHandle.ToIntPtr(handle), options);
        }
        finally
        {
            handle.Free();
        }

        if (capture.Failure is not null)
        {
            ExceptionDispatchInfo.Throw(capture.Failure);
        }

        return capture.Text;
    }

    /// <summary>Returns jemalloc's full statistics report as one JSON document (<c>malloc_stats_print</c> with <c>J</c>).</summary>
    /// <param name="options">Sections to leave out, as for <see cref="GetStatsText(string?)"/>.</param>
    /// <exception cref="ArgumentException"><paramref name="options"/> has a letter jemalloc does not know.</exception>
    /// <exception cref="JemLibraryException">The native library could not be loaded.</exception>
    public static string GetStatsJson(string? options = null)
    {
        ValidateStatsOptions(options);
        return GetStatsText(options is null ? "J" : options.Contains('J', StringComparison.Ordinal) ? options : "J" + options);
    }

    /// <summary>
    /// Prints jemalloc's statistics report through jemalloc's message function: to the
    /// <see cref="MessageReceived"/> listeners or <see cref="MessageWriter"/> when one is set,
    /// otherwise to standard error.
    /// </summary>
    /// <param name="options">Option letters, as for <see cref="GetStatsText(string?)"/>.</param>
    /// <exception cref="ArgumentException"><paramref name="options"/> has a letter jemalloc does not know.</exception>
    /// <exception cref="JemLibraryException">The native library could not be loaded.</exception>
    public static void PrintStats(string? options = null) => MallocStatsPrint(null, null, options);

    /// <summary>
    /// Calls <c>je_malloc_stats_print</c> directly. The callback receives <paramref name="callbackState"/>
    /// and a null-terminated UTF-8 piece of the report, many times; it must not throw.
    /// </summary>
    /// <param name="writeCallback">The writer, or null for jemalloc's message function (see <see cref="PrintStats(string?)"/>).</param>
    /// <param name="callbackState">Passed to the callback unchanged.</param>
    /// <param name="options">Option letters, as for <see cref="GetStatsText(string?)"/>.</param>
    /// <exception cref="ArgumentException"><paramref name="options"/> has a letter jemalloc does not know.</exception>
    /// <exception cref="JemLibraryException">The native library could not be loaded.</exception>
    public static void MallocStatsPrint(delegate* unmanaged<void*, byte*, void> writeCallback, void* callbackState, string? options)
    {
        ValidateStatsOptions(options);
        if (string.IsNullOrEmpty(options))
        {
            JemNative.MallocStatsPrint(writeCallback, callbackState, null);
            return;
        }

        // Only ASCII letters got through validation: one byte each, plus the terminator.
        byte* utf8 = stackalloc byte[options.Length + 1];
        for (int i = 0; i < options.Length; i++)
        {
            utf8[i] = (byte)options[i];
        }

        utf8[options.Length] = 0;
        JemNative.MallocStatsPrint(writeCallback, callbackState, utf8);
    }

    private static void ValidateStatsOptions(string? options)
    {
        if (options is null)
        {
            return;
        }

        foreach (char letter in options)
        {
            if (!StatsOptionLetters.Contains(letter, StringComparison.Ordinal))
            {
                throw new ArgumentException(
                    $"'{letter}' is not a malloc_stats_print option; use letters from \"{StatsOptionLetters}\".", nameof(options));
            }
        }

        if (options.Length > 64)
        {
            throw new ArgumentException("The statistics options are too long; each letter needs to appear once at most.", nameof(options));
        }
    }
}
