using System.Buffers;
using System.Text;

namespace jemalloc.Columns;

/// <summary>A string's UTF-8 bytes for one comparison, in a rented array returned on dispose.</summary>
internal readonly ref struct Utf8Text
{
    private readonly byte[] _rented;
    private readonly int _length;

    internal Utf8Text(string value)
    {
        _rented = ArrayPool<byte>.Shared.Rent(Encoding.UTF8.GetMaxByteCount(value.Length));
        _length = Encoding.UTF8.GetBytes(value, _rented);
    }

    internal ReadOnlySpan<byte> Bytes => _rented.AsSpan(0, _length);

    public void Dispose() => ArrayPool<byte>.Shared.Return(_rented);
}
