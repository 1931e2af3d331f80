using System.Buffers;
using System.Security.Cryptography;

namespace jemalloc.Benchmarks.IO;

/// <summary>
/// An <see cref="IBufferWriter{T}"/> that keeps nothing: every advanced byte goes into a SHA-256 and
/// is counted. It gives the JSON document's reference length and hash in a small, reused buffer.
/// </summary>
internal sealed class HashingBufferWriter : IBufferWriter<byte>, IDisposable
{
    private readonly IncrementalHash _hash = IncrementalHash.CreateHash(HashAlgorithmName.SHA256);
    private byte[] _buffer = new byte[1 << 20];

    /// <summary>The bytes advanced so far.</summary>
    public long Length { get; private set; }

    public void Advance(int count)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(count);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(count, _buffer.Length);
        _hash.AppendData(_buffer, 0, count);
        Length += count;
    }

    public Memory<byte> GetMemory(int sizeHint = 0)
    {
        Ensure(sizeHint);
        return _buffer;
    }

    public Span<byte> GetSpan(int sizeHint = 0)
    {
        Ensure(sizeHint);
        return _buffer;
    }

    /// <summary>The SHA-256 of every advanced byte, in hex.</summary>
    public string HashHex() => Convert.ToHexString(_hash.GetCurrentHash());

    public void Dispose() => _hash.Dispose();

    private void Ensure(int sizeHint)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(sizeHint);
        if (sizeHint > _buffer.Length)
        {
            _buffer = new byte[sizeHint];
        }
    }
}
