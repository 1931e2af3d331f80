using System.Diagnostics.CodeAnalysis;
using System.Text;

namespace jemalloc.Caching.Internal;

/// <summary>The add-on's throws, kept out of line so the cache's calls stay small.</summary>
internal static class CachingThrow
{
    [DoesNotReturn]
    internal static void KeyTooLong(string paramName, int utf8Length) =>
        throw new ArgumentException(
            $"The key is {utf8Length:N0} bytes in UTF-8; a NativeCache key is at most {NativeCache.MaxKeyLength:N0} bytes.", paramName);

    internal static ArgumentException KeyNotUtf16(string paramName, EncoderFallbackException inner) =>
        new($"The key is not valid UTF-16: it has a lone surrogate at index {inner.Index}. A NativeCache keys a string by its UTF-8 bytes, which cannot represent one (with it, two different keys would be the same).", paramName, inner);

    [DoesNotReturn]
    internal static void ValueOverBudget(string paramName, long length, long budget) =>
        throw new ArgumentException(
            $"The value is {length:N0} bytes, more than the cache's whole budget of {budget:N0} bytes.", paramName);

    [DoesNotReturn]
    internal static void Disposed() => throw new ObjectDisposedException(nameof(NativeDistributedCache));

    [DoesNotReturn]
    internal static void BudgetTooSmall(string paramName, long budget) =>
        throw new ArgumentOutOfRangeException(
            paramName, budget, $"NativeDistributedCacheOptions.BudgetBytes is {budget:N0}; it must be at least {NativeCache.MinimumBudgetBytes:N0} (NativeCache.MinimumBudgetBytes).");
}
