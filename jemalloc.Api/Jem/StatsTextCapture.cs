using System.Runtime.InteropServices;
using System.Text;

namespace jemalloc;

/// <summary>
/// Collects the text <c>malloc_stats_print</c> writes in pieces. A failure inside the native
/// callback is kept here and rethrown after the native call returns, never thrown across it.
/// </summary>
internal sealed class StatsTextCapture
{
    private readonly StringBuilder _text = new(16 * 1024);

    /// <summary>The first exception the callback caught, if any.</summary>
    internal Exception? Failure { get; private set; }

    internal string Text => _text.ToString();

    /// <summary>The <c>write_cb</c> passed to <c>malloc_stats_print</c>; the state is a <see cref="GCHandle"/> to a capture.</summary>
    [UnmanagedCallersOnly]
    internal static unsafe void Append(void* state, byte* text)
    {
        StatsTextCapture? capture = null;
        try
        {
            capture = (StatsTextCapture)GCHandle.FromIntPtr((nint)state).Target!;
            if (capture.Failure is null && text != null)
            {
                capture._text.Append(Marshal.PtrToStringUTF8((nint)text));
            }
        }
#pragma warning disable CA1031 // Nothing may propagate into native code; the failure is rethrown by the caller.
        catch (Exception exception)
#pragma warning restore CA1031
        {
            if (capture is not null)
            {
                capture.Failure ??= exception;
            }
        }
    }
}
