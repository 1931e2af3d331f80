using System.Text;

namespace jemalloc.Columns;

/// <summary>UTF-8 that refuses what it cannot encode (a lone surrogate) instead of writing U+FFFD.</summary>
internal static class Utf8Strict
{
    private static readonly UTF8Encoding s_encoding = new(encoderShouldEmitUTF8Identifier: false, throwOnInvalidBytes: true);

    /// <exception cref="ArgumentException"><paramref name="value"/> holds a lone surrogate.</exception>
    internal static int GetBytes(string value, Span<byte> destination)
    {
        try
        {
            return s_encoding.GetBytes(value, destination);
        }
        catch (EncoderFallbackException e)
        {
            throw new ArgumentException($"The string holds a lone surrogate (U+{(int)(e.CharUnknown != 0 ? e.CharUnknown : e.CharUnknownHigh):X4}) at index {e.Index}: it has no UTF-8 form.", nameof(value), e);
        }
    }
}
