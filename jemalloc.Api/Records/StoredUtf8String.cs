using System.Buffers;
using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using System.Text;
using jemalloc.Internal;
using jemalloc.Ledger;
using jemalloc.Records;

namespace jemalloc;

/// <summary>
/// A UTF-8 string kept in a <see cref="Utf8StringStore"/>: 16 bytes (the ledger handle of the
/// store block that holds the bytes, their offset and their length) and no object reference, so a
/// table of millions of them is nothing for the garbage collector to trace.
/// </summary>
/// <remarks>
/// <para>
/// Every member that reads the bytes first checks that the block is still live: once the store is
/// <see cref="Utf8StringStore.Reset"/> or disposed, every copy of every value it handed out throws
/// <see cref="ObjectDisposedException"/>, and a block's generation is never reused, so a stale value
/// never reads another string.
/// </para>
/// <para>
/// Sixteen bytes are not copied in one move: a copy made while another thread overwrites the same
/// variable (a field of a record in a shared array, say) can mix the words of the two values. Every
/// read also checks that the offset and length name one whole string of the value's block (the
/// store lays its blocks out so that this is a few byte compares), so a mixed value either is one of
/// the store's real values or throws <see cref="InvalidOperationException"/>; it never reads outside
/// its block, nor part of a string. Share records holding values between threads under a lock, as
/// any multi-word struct.
/// </para>
/// <para>
/// The value is immutable: <see cref="Utf8StringStore.Replace"/> stores a new string and returns a
/// new value. Comparison is ordinal over the UTF-8 bytes (Unicode code point order), without decoding.
/// <see langword="default"/> reads as the empty string and belongs to no store.
/// </para>
/// </remarks>
public readonly unsafe struct StoredUtf8String : IEquatable<StoredUtf8String>, IComparable<StoredUtf8String>
{
    private const string TypeName = "StoredUtf8String";
    private const int StackLimit = 256;

    // First, eight bytes: copied in one move, as a handle is.
    private readonly LedgerBlock _block;
    private readonly int _offset;
    private readonly int _length;

    internal StoredUtf8String(LedgerBlock block, int offset, int length)
    {
        _block = block;
        _offset = offset;
        _length = length;
    }

    /// <summary>The length in UTF-8 bytes.</summary>
    /// <exception cref="ObjectDisposedException">The store was reset or disposed.</exception>
    /// <exception cref="InvalidOperationException">The value is a mix of two values (a racy copy): see the remarks.</exception>
    public int Length => Bytes.Length;

    /// <summary>Whether the bytes are still readable: <see langword="false"/> once the store was reset or disposed, and for <see langword="default"/>.</summary>
    public bool IsValid => _block.IsLive;

    /// <summary>Whether this is <see langword="default"/>: the empty string of no store.</summary>
    public bool IsDefault => _block.IsDefault;

    /// <summary>The store block holding the bytes.</summary>
    internal LedgerBlock Block => _block;

    /// <summary>Where the bytes start in the block.</summary>
    internal int Offset => _offset;

    /// <summary>The checked bytes: empty for default, otherwise the string's range of its live block.</summary>
    internal ReadOnlySpan<byte> Bytes
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get
        {
            if (_block.IsDefault)
            {
                return default;
            }

            // One load of the block's slot: live, its length in bytes and its address.
            if (!_block.TryReadKeyed(out uint blockLength, out nint address))
            {
                ThrowStoreGone();
            }

            byte* block = (byte*)address;
            if (StoredStringLayout.Find(block, blockLength, _offset, _length) == null)
            {
                ThrowNotWhole();
            }

            return new ReadOnlySpan<byte>(block + _offset, _length);
        }
    }

    /// <summary>
    /// Asks the CPU to start loading the header and first bytes of the string (reads nothing, checks
    /// nothing, never faults: a stale or mixed value only prefetches a useless line), so that a scan
    /// that reads many values overlaps their cache misses. <paramref name="bytes"/>: how many of the
    /// first bytes will be read.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal void Prefetch(int bytes)
    {
        if (_block.IsDefault)
        {
            return;
        }

        // The block is one the ledger gave (a mixed value mixes whole words of real values), so its
        // slot record is committed; its address, read unleased, may be a freed block's, which a
        // prefetch may name.
        byte* data = (byte*)_block.Address + _offset;
        CachePrefetch.Line(data - 1);
        CachePrefetch.Line(data + bytes);
    }

    /// <summary>The length field, unchecked (the store checks the value before it uses it).</summary>
    internal int UncheckedLength => _length;

    /// <summary>Whether both values are copies of one stored string (same store block and range); reads nothing, never throws.</summary>
    public bool IsSameStorage(StoredUtf8String other) => _block == other._block && _offset == other._offset && _length == other._length;

    /// <summary>Whether the string starts with the UTF-8 bytes <paramref name="prefix"/>.</summary>
    /// <exception cref="ObjectDisposedException">The store was reset or disposed.</exception>
    /// <exception cref="InvalidOperationException">The value is a mix of two values (a racy copy): see the remarks.</exception>
    public bool StartsWith(ReadOnlySpan<byte> prefix) => Bytes.StartsWith(prefix);

    /// <summary>Whether the string starts with the text of <paramref name="prefix"/> (compared as UTF-8; a prefix with an unpaired surrogate never matches).</summary>
    /// <exception cref="ArgumentNullException"><paramref name="prefix"/> is null.</exception>
    /// <exception cref="ObjectDisposedException">The store was reset or disposed.</exception>
    /// <exception cref="InvalidOperationException">The value is a mix of two values (a racy copy): see the remarks.</exception>
    public bool StartsWith(string prefix)
    {
        ArgumentNullException.ThrowIfNull(prefix);
        ReadOnlySpan<byte> mine = Bytes;
        return prefix.Length <= mine.Length && MatchUtf8(prefix, mine, wholeString: false);
    }

    /// <summary>Whether the string is exactly the UTF-8 bytes <paramref name="utf8"/>.</summary>
    /// <exception cref="ObjectDisposedException">The store was reset or disposed.</exception>
    /// <exception cref="InvalidOperationException">The value is a mix of two values (a racy copy): see the remarks.</exception>
    public bool Equals(ReadOnlySpan<byte> utf8) => Bytes.SequenceEqual(utf8);

    /// <summary>Whether the string holds the UTF-8 encoding of <paramref name="other"/>; <see langword="false"/> for null or invalid UTF-16.</summary>
    /// <exception cref="ObjectDisposedException">The store was reset or disposed.</exception>
    /// <exception cref="InvalidOperationException">The value is a mix of two values (a racy copy): see the remarks.</exception>
    public bool Equals(string? other)
    {
        if (other is null)
        {
            return false;
        }

        ReadOnlySpan<byte> mine = Bytes;
        // Each UTF-16 code unit needs one to three UTF-8 bytes (in long: three times a long string overflows an int).
        return mine.Length >= other.Length && mine.Length <= (long)other.Length * 3 &&
               MatchUtf8(other, mine, wholeString: true);
    }

    /// <summary>Whether both hold the same bytes (they may be in different stores).</summary>
    /// <exception cref="ObjectDisposedException">The store of either was reset or disposed.</exception>
    /// <exception cref="InvalidOperationException">The value is a mix of two values (a racy copy): see the remarks.</exception>
    public bool Equals(StoredUtf8String other) => Bytes.SequenceEqual(other.Bytes);

    /// <summary>Whether <paramref name="obj"/> is a <see cref="StoredUtf8String"/> with the same bytes.</summary>
    /// <exception cref="ObjectDisposedException">The store of either was reset or disposed.</exception>
    /// <exception cref="InvalidOperationException">The value is a mix of two values (a racy copy): see the remarks.</exception>
    public override bool Equals(object? obj) => obj is StoredUtf8String other && Equals(other);

    /// <summary>A hash of the bytes, equal for equal strings.</summary>
    /// <exception cref="ObjectDisposedException">The store was reset or disposed.</exception>
    /// <exception cref="InvalidOperationException">The value is a mix of two values (a racy copy): see the remarks.</exception>
    public override int GetHashCode()
    {
        var hash = default(HashCode);
        hash.AddBytes(Bytes);
        return hash.ToHashCode();
    }

    /// <summary>Ordinal comparison of the UTF-8 bytes (Unicode code point order): negative, zero or positive.</summary>
    /// <exception cref="ObjectDisposedException">The store of either was reset or disposed.</exception>
    /// <exception cref="InvalidOperationException">The value is a mix of two values (a racy copy): see the remarks.</exception>
    public int CompareTo(StoredUtf8String other) => Math.Sign(Bytes.SequenceCompareTo(other.Bytes));

    /// <summary>Ordinal comparison with the UTF-8 bytes <paramref name="utf8"/>: negative, zero or positive.</summary>
    /// <exception cref="ObjectDisposedException">The store was reset or disposed.</exception>
    /// <exception cref="InvalidOperationException">The value is a mix of two values (a racy copy): see the remarks.</exception>
    public int CompareTo(ReadOnlySpan<byte> utf8) => Math.Sign(Bytes.SequenceCompareTo(utf8));

    /// <summary>Copies the UTF-8 bytes to <paramref name="destination"/>.</summary>
    /// <exception cref="ArgumentException"><paramref name="destination"/> is shorter than <see cref="Length"/>.</exception>
    /// <exception cref="ObjectDisposedException">The store was reset or disposed.</exception>
    /// <exception cref="InvalidOperationException">The value is a mix of two values (a racy copy): see the remarks.</exception>
    public void CopyTo(Span<byte> destination)
    {
        ReadOnlySpan<byte> mine = Bytes;
        RangeGuard.CheckDestination(destination.Length, mine.Length, "string");
        mine.CopyTo(destination);
    }

    /// <summary>Copies the UTF-8 bytes into a new array.</summary>
    /// <exception cref="ObjectDisposedException">The store was reset or disposed.</exception>
    /// <exception cref="InvalidOperationException">The value is a mix of two values (a racy copy): see the remarks.</exception>
    public byte[] ToArray() => Bytes.ToArray();

    /// <summary>Decodes the string into a .NET <see cref="string"/>.</summary>
    /// <exception cref="ObjectDisposedException">The store was reset or disposed.</exception>
    /// <exception cref="InvalidOperationException">The value is a mix of two values (a racy copy): see the remarks.</exception>
    public override string ToString() => Encoding.UTF8.GetString(Bytes);

    /// <summary>Whether both hold the same bytes.</summary>
    /// <exception cref="ObjectDisposedException">The store of either was reset or disposed.</exception>
    /// <exception cref="InvalidOperationException">The value is a mix of two values (a racy copy): see the remarks.</exception>
    public static bool operator ==(StoredUtf8String left, StoredUtf8String right) => left.Equals(right);

    /// <summary>Whether they hold different bytes.</summary>
    /// <exception cref="ObjectDisposedException">The store of either was reset or disposed.</exception>
    /// <exception cref="InvalidOperationException">The value is a mix of two values (a racy copy): see the remarks.</exception>
    public static bool operator !=(StoredUtf8String left, StoredUtf8String right) => !left.Equals(right);

    /// <summary>Ordinal order.</summary>
    /// <exception cref="ObjectDisposedException">The store of either was reset or disposed.</exception>
    /// <exception cref="InvalidOperationException">The value is a mix of two values (a racy copy): see the remarks.</exception>
    public static bool operator <(StoredUtf8String left, StoredUtf8String right) => left.CompareTo(right) < 0;

    /// <summary>Ordinal order.</summary>
    /// <exception cref="ObjectDisposedException">The store of either was reset or disposed.</exception>
    /// <exception cref="InvalidOperationException">The value is a mix of two values (a racy copy): see the remarks.</exception>
    public static bool operator <=(StoredUtf8String left, StoredUtf8String right) => left.CompareTo(right) <= 0;

    /// <summary>Ordinal order.</summary>
    /// <exception cref="ObjectDisposedException">The store of either was reset or disposed.</exception>
    /// <exception cref="InvalidOperationException">The value is a mix of two values (a racy copy): see the remarks.</exception>
    public static bool operator >(StoredUtf8String left, StoredUtf8String right) => left.CompareTo(right) > 0;

    /// <summary>Ordinal order.</summary>
    /// <exception cref="ObjectDisposedException">The store of either was reset or disposed.</exception>
    /// <exception cref="InvalidOperationException">The value is a mix of two values (a racy copy): see the remarks.</exception>
    public static bool operator >=(StoredUtf8String left, StoredUtf8String right) => left.CompareTo(right) >= 0;

    // The value itself is never freed: its store block is, by the store's Reset or Dispose or its arena's.
    [DoesNotReturn, MethodImpl(MethodImplOptions.NoInlining)]
    private static void ThrowStoreGone() =>
        ThrowHelper.ThrowObjectDisposed(TypeName, $"This {TypeName}'s bytes were freed: its Utf8StringStore was reset or disposed, or so was the JemArena the store was made in; read strings only while their store holds them.");

    [DoesNotReturn, MethodImpl(MethodImplOptions.NoInlining)]
    private static void ThrowNotWhole() =>
        ThrowHelper.ThrowInvalidOperation("This StoredUtf8String is not a value its store handed out: its block holds no string at its offset and length. A copy made while another thread overwrote the variable mixes two values; share such records under a lock.");

    // Encodes text to UTF-8 one stack buffer at a time and compares each piece with the next bytes of
    // the string, whole or as a prefix: no buffer of the text's size (a text of a billion characters
    // would need three billion bytes). Text that is not valid UTF-16 has no UTF-8 form: it matches nothing.
    private static bool MatchUtf8(ReadOnlySpan<char> text, ReadOnlySpan<byte> mine, bool wholeString)
    {
        Span<byte> buffer = stackalloc byte[StackLimit];
        while (!text.IsEmpty)
        {
            // DestinationTooSmall stops at a whole character, so each piece is complete UTF-8.
            OperationStatus status = System.Text.Unicode.Utf8.FromUtf16(text, buffer, out int read, out int written, replaceInvalidSequences: false);
            if (status is not (OperationStatus.Done or OperationStatus.DestinationTooSmall) ||
                written > mine.Length || !mine[..written].SequenceEqual(buffer[..written]))
            {
                return false;
            }

            mine = mine[written..];
            text = text[read..];
        }

        return !wholeString || mine.IsEmpty;
    }
}
