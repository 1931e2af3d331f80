using System.Buffers;
using System.Text;

namespace jemalloc.Columns;

/// <summary>A string's UTF-8 bytes for one comparison, in a rented array returned on dispose; a lone surrogate is an <see cref="ArgumentException"/>.</summary>
internal readonly ref struct Utf8Text
{
    private readonly byte[] _rented;
    private readonly int _length;

    internal Utf8Text(string value)
    {
        _rented = ArrayPool<byte>.Shared.Rent(Encoding.UTF8.GetMaxByteCount(value.Length));
        try
        {
            // Strict: a lone surrogate has no UTF-8 form; encoded as U+FFFD it would match a row holding U+FFFD.
            _length = Utf8Strict.GetBytes(value, _rented);
        }
        catch
        {
            ArrayPool<byte>.Shared.Return(_rented);
            throw;
        }
    }

    internal ReadOnlySpan<byte> Bytes => _rented.AsSpan(0, _length);

    public void Dispose() => ArrayPool<byte>.Shared.Return(_rented);
}
