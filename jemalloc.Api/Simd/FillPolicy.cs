namespace jemalloc;

/// <summary>
/// When the structures' <c>Fill</c>, <c>VectorFill</c>, <c>ParallelVectorFill</c> and
/// create-with-value constructors write with non-temporal (streaming) stores: a structure of at least
/// <see cref="NonTemporalThresholdBytes"/> is written in whole cache lines that bypass the cache, with
/// no read of each line before it is overwritten; smaller ones, and every structure while the
/// threshold is <see cref="Never"/> (the default), use <see cref="Span{T}.Fill"/>'s vectorized loop.
/// </summary>
/// <remarks>
/// <para>
/// Why off by default: on the machine this library is measured on, ordinary vector stores already
/// fill large blocks as fast as the memory takes them, and streaming stores were no faster at any
/// size and slower from tens of MiB up (<c>jembench array --fill</c> shows both as rows: "Managed
/// array: Span&lt;T&gt;.Fill" and "Machine limit: non-temporal store loop"). Where that row wins on your
/// machine (typically blocks much larger than the last-level cache on CPUs whose ordinary stores
/// read each line first), set the threshold to about the size where it starts to win.
/// </para>
/// <para>
/// Streaming needs SSE2 (every x64 CPU); elsewhere the threshold is ignored. The values written are
/// exactly those of an ordinary fill, for every element size and start address.
/// </para>
/// </remarks>
public static class FillPolicy
{
    /// <summary>The threshold that never streams (the default).</summary>
    public const long Never = long.MaxValue;

    private static long s_nonTemporalThresholdBytes = Never;

    /// <summary>
    /// The size in bytes of a whole structure from which its fills stream; <see cref="Never"/> (the
    /// default) switches streaming off.
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException">The value is negative.</exception>
    public static long NonTemporalThresholdBytes
    {
        get => Volatile.Read(ref s_nonTemporalThresholdBytes);
        set
        {
            ArgumentOutOfRangeException.ThrowIfNegative(value);
            Volatile.Write(ref s_nonTemporalThresholdBytes, value);
        }
    }
}
