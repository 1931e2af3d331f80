using System.Buffers;
using System.Text;

namespace jemalloc.Caching.Internal;

/// <summary>
/// A string key as the UTF-8 bytes the <see cref="NativeCache"/> keys it by: in the caller's stack
/// buffer when it fits, else in a pooled array given back by <see cref="Dispose"/>.
/// </summary>
internal ref struct Utf8Key
{
    /// <summary>The stack buffer a caller offers: most keys fit in it.</summary>
    internal const int StackBytes = 256;

    // Strict: a lone surrogate would otherwise become U+FFFD, and two different strings the same key.
    private static readonly UTF8Encoding Strict = new(encoderShouldEmitUTF8Identifier: false, throwOnInvalidBytes: true);

    private byte[]? _rented;

    /// <summary>Encodes <paramref name="key"/>, in <paramref name="scratch"/> if it fits.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="key"/> is null.</exception>
    /// <exception cref="ArgumentException">The key has a lone surrogate, or is longer than <see cref="NativeCache.MaxKeyLength"/> bytes in UTF-8.</exception>
    internal Utf8Key(string key, Span<byte> scratch)
    {
        ArgumentNullException.ThrowIfNull(key);
        int length;
        try
        {
            length = Strict.GetByteCount(key);
        }
        catch (EncoderFallbackException e)
        {
            throw CachingThrow.KeyNotUtf16(nameof(key), e);
        }

        if (length > NativeCache.MaxKeyLength)
        {
            CachingThrow.KeyTooLong(nameof(key), length);
        }

        Span<byte> destination = length <= scratch.Length ? scratch : (_rented = ArrayPool<byte>.Shared.Rent(length));
        Bytes = destination[..Strict.GetBytes(key, destination)];
    }

    /// <summary>The key's UTF-8 bytes.</summary>
    internal ReadOnlySpan<byte> Bytes { get; }

    /// <summary>Gives back the pooled array, if one was needed.</summary>
    public void Dispose()
    {
        if (_rented is not null)
        {
            ArrayPool<byte>.Shared.Return(_rented);
            _rented = null;
        }
    }
}
