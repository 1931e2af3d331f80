using System.Buffers;
using System.Diagnostics.CodeAnalysis;
using System.Text;
using System.Text.Unicode;
using jemalloc.Internal;

namespace jemalloc;

/// <summary>
/// An immutable UTF-8 string in native memory: a <see cref="FixedBuffer{T}"/> of bytes holding
/// valid UTF-8 followed by a terminating zero byte (so <see cref="Pointer"/> is also a C string).
/// Like <see cref="FixedBuffer{T}"/> it is an unmanaged struct: copies share the memory, and after
/// <see cref="Free"/> through any copy every use through any copy throws <see cref="ObjectDisposedException"/>.
/// </summary>
/// <remarks>
/// Lengths and indexes are in bytes. Comparison is ordinal over the UTF-8 bytes, which is Unicode
/// code point order. <see langword="default"/> reads as the empty string and owns no memory.
/// </remarks>
public readonly unsafe struct FixedUtf8String : IEquatable<FixedUtf8String>, IEquatable<string>, IComparable<FixedUtf8String>
{
    private const string TypeName = "FixedUtf8String";
    private const int NotFound = -1;
    private const int StackLimit = 256;

    private static readonly UTF8Encoding StrictUtf8 = new(encoderShouldEmitUTF8Identifier: false, throwOnInvalidBytes: true);

    // Length + 1 bytes: the string and a terminating zero; length 0 only for default.
    private readonly FixedBuffer<byte> _buffer;

    /// <summary>Encodes <paramref name="value"/> as UTF-8 into native memory.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="value"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="value"/> contains an unpaired surrogate (it is not valid UTF-16), at the index the message names.</exception>
    /// <exception cref="ArgumentOutOfRangeException">The UTF-8 encoding of <paramref name="value"/> is longer than <see cref="MaxLength"/> bytes.</exception>
    /// <exception cref="OutOfMemoryException">jemalloc could not allocate the memory.</exception>
    public FixedUtf8String(string value)
    {
        ArgumentNullException.ThrowIfNull(value);
        int byteCount;
        try
        {
            byteCount = StrictUtf8.GetByteCount(value);
        }
        catch (EncoderFallbackException e)
        {
            throw new ArgumentException($"The string has an unpaired surrogate at index {e.Index}: it cannot be encoded as UTF-8.", nameof(value), e);
        }
        catch (ArgumentException)
        {
            // The count does not fit an int (the encoding's overflow, after the fallback's above):
            // more than int.MaxValue bytes.
            byteCount = -1;
        }

        CheckLength(byteCount, value.Length, nameof(value));
        _buffer = new FixedBuffer<byte>(byteCount + 1, AllocationOptions.Default, AllocationKind.Utf8String);
        using MemoryLease<byte> lease = _buffer.BeginOperation(TypeName);
        StrictUtf8.GetBytes(value, lease.Span);
    }

    /// <summary>Copies UTF-8 bytes into native memory after checking they are valid UTF-8.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="utf8"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="utf8"/> is not valid UTF-8; the message names the offset of the first invalid byte.</exception>
    /// <exception cref="OutOfMemoryException">jemalloc could not allocate the memory.</exception>
    public FixedUtf8String(byte[] utf8)
        : this(new ReadOnlySpan<byte>(utf8 ?? throw new ArgumentNullException(nameof(utf8))))
    {
    }

    /// <summary>Copies UTF-8 bytes into native memory after checking they are valid UTF-8.</summary>
    /// <exception cref="ArgumentException"><paramref name="utf8"/> is not valid UTF-8; the message names the offset of the first invalid byte.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="utf8"/> is longer than <see cref="MaxLength"/> bytes.</exception>
    /// <exception cref="OutOfMemoryException">jemalloc could not allocate the memory.</exception>
    public FixedUtf8String(ReadOnlySpan<byte> utf8)
    {
        CheckLength(utf8.Length, utf8.Length, nameof(utf8));

        // Copied first and checked in the copy, which nothing else can reach yet: the caller's bytes
        // may be changed by another thread meanwhile, and the bytes checked must be the bytes kept.
        _buffer = new FixedBuffer<byte>(utf8.Length + 1, AllocationOptions.Default, AllocationKind.Utf8String);
        int invalidAt = -1;
        using (MemoryLease<byte> lease = _buffer.BeginOperation(TypeName))
        {
            ReadOnlySpan<byte> copy = lease.Span[..utf8.Length];
            utf8.CopyTo(lease.Span);
            if (!Utf8.IsValid(copy))
            {
                invalidAt = FirstInvalidOffset(copy);
            }
        }

        if (invalidAt >= 0)
        {
            _buffer.Free();
            ThrowHelper.ThrowArgument(nameof(utf8), $"The bytes are not valid UTF-8: the sequence at byte offset {invalidAt} is malformed.");
        }
    }

    /// <summary>The most UTF-8 bytes a string holds: one less than <see cref="int.MaxValue"/>, leaving room for the terminating zero.</summary>
    public const int MaxLength = int.MaxValue - 1;

    /// <summary>The length in UTF-8 bytes (without the terminating zero).</summary>
    public int Length => Math.Max(_buffer.LengthOf(TypeName) - 1, 0);

    /// <summary>Whether the string's memory is still allocated. <see langword="false"/> for <see langword="default"/>.</summary>
    public bool IsValid => _buffer.IsValid;

    /// <summary>The raw address of the zero-terminated UTF-8 bytes, for native calls. Acquire the string for the duration of the call.</summary>
    /// <exception cref="ObjectDisposedException">The string was freed, or is <see langword="default"/> (which owns no memory).</exception>
    [SuppressMessage("Naming", "CA1720:Identifier contains type name", Justification = "It is the raw pointer, named as the users of the API expect.")]
    public nint Pointer
    {
        get
        {
            _buffer.Block.ThrowIfNotLive(TypeName);
            return (nint)_buffer.UnsafePointer;
        }
    }

    /// <summary>
    /// Opens a lease on the string's UTF-8 bytes (without the terminating zero): until it is disposed
    /// the string cannot be freed. Use it as <c>using var lease = name.Lease();</c>.
    /// </summary>
    /// <exception cref="ObjectDisposedException">The string was freed.</exception>
    public ReadOnlyMemoryLease<byte> Lease() =>
        _buffer == default ? default : new ReadOnlyMemoryLease<byte>(_buffer.LeaseFor(TypeName), Length);

    /// <summary>Copies the UTF-8 bytes (without the terminating zero) into a new array.</summary>
    /// <exception cref="ObjectDisposedException">The string was freed.</exception>
    public byte[] ToArray()
    {
        using MemoryLease<byte> lease = Open();
        return Text(lease.Span).ToArray();
    }

    /// <summary>Copies the UTF-8 bytes (without the terminating zero) to <paramref name="destination"/>.</summary>
    /// <exception cref="ObjectDisposedException">The string was freed.</exception>
    /// <exception cref="ArgumentException"><paramref name="destination"/> is shorter than <see cref="Length"/>.</exception>
    public void CopyTo(Span<byte> destination)
    {
        using MemoryLease<byte> lease = Open();
        ReadOnlySpan<byte> mine = Text(lease.Span);
        RangeGuard.CheckDestination(destination.Length, mine.Length, "string");
        mine.CopyTo(destination);
    }

    /// <summary>Decodes the string into a .NET <see cref="string"/>.</summary>
    /// <exception cref="ObjectDisposedException">The string was freed.</exception>
    public override string ToString()
    {
        using MemoryLease<byte> lease = Open();
        return Encoding.UTF8.GetString(Text(lease.Span));
    }

    /// <summary>Whether both hold the same bytes.</summary>
    /// <exception cref="ObjectDisposedException">One of them was freed (unless both are copies of the same string).</exception>
    public bool Equals(FixedUtf8String other)
    {
        if (_buffer == other._buffer)
        {
            return true;
        }

        using MemoryLease<byte> mine = Open();
        using MemoryLease<byte> theirs = other.Open();
        return Text(mine.Span).SequenceEqual(Text(theirs.Span));
    }

    /// <summary>Whether this string holds the UTF-8 encoding of <paramref name="other"/>; <see langword="false"/> for null or invalid UTF-16.</summary>
    /// <exception cref="ObjectDisposedException">This string was freed.</exception>
    public bool Equals(string? other)
    {
        if (other is null)
        {
            return false;
        }

        using MemoryLease<byte> lease = Open();
        ReadOnlySpan<byte> bytes = Text(lease.Span);
        // Each UTF-16 code unit needs one to three UTF-8 bytes (in a long: three times a string's
        // length can pass int.MaxValue).
        if (bytes.Length < other.Length || bytes.Length > 3L * other.Length)
        {
            return false;
        }

        return WithUtf8(other, bytes, static (encoded, mine) => encoded.SequenceEqual(mine), fallback: false);
    }

    /// <summary>Whether <paramref name="obj"/> is a <see cref="FixedUtf8String"/> with the same bytes.</summary>
    /// <exception cref="ObjectDisposedException">One of them was freed.</exception>
    public override bool Equals(object? obj) => obj is FixedUtf8String other && Equals(other);

    /// <summary>A hash of the bytes, equal for equal strings.</summary>
    /// <exception cref="ObjectDisposedException">The string was freed.</exception>
    public override int GetHashCode()
    {
        using MemoryLease<byte> lease = Open();
        var hash = default(HashCode);
        hash.AddBytes(Text(lease.Span));
        return hash.ToHashCode();
    }

    /// <summary>Ordinal comparison of the UTF-8 bytes (Unicode code point order): negative, zero or positive.</summary>
    /// <exception cref="ObjectDisposedException">One of them was freed.</exception>
    public int CompareTo(FixedUtf8String other) => Compare(other, static (mine, theirs) => Math.Sign(mine.SequenceCompareTo(theirs)));

    /// <summary>The byte offset of the first occurrence of <paramref name="value"/>, or -1.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="value"/> is null.</exception>
    /// <exception cref="ObjectDisposedException">The string was freed.</exception>
    public int IndexOf(string value)
    {
        ArgumentNullException.ThrowIfNull(value);
        return WithUtf8(value, this, static (encoded, mine) => mine.IndexOf(encoded), fallback: NotFound);
    }

    /// <summary>The byte offset of the first occurrence of <paramref name="value"/>, or -1 (always for a lone surrogate).</summary>
    /// <exception cref="ObjectDisposedException">The string was freed.</exception>
    public int IndexOf(char value)
    {
        Span<byte> encoded = stackalloc byte[4];
        return TryEncode(value, encoded, out int length) ? WithText(encoded[..length], static (encoded, mine) => mine.IndexOf(encoded)) : NotFound;
    }

    /// <summary>The byte offset of the first occurrence of <paramref name="value"/>, or -1.</summary>
    /// <exception cref="ObjectDisposedException">Either string was freed.</exception>
    public int IndexOf(FixedUtf8String value) => Compare(value, static (mine, theirs) => mine.IndexOf(theirs));

    /// <summary>The byte offset of the last occurrence of <paramref name="value"/>, or -1.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="value"/> is null.</exception>
    /// <exception cref="ObjectDisposedException">The string was freed.</exception>
    public int LastIndexOf(string value)
    {
        ArgumentNullException.ThrowIfNull(value);
        return WithUtf8(value, this, static (encoded, mine) => mine.LastIndexOf(encoded), fallback: NotFound);
    }

    /// <summary>The byte offset of the last occurrence of <paramref name="value"/>, or -1 (always for a lone surrogate).</summary>
    /// <exception cref="ObjectDisposedException">The string was freed.</exception>
    public int LastIndexOf(char value)
    {
        Span<byte> encoded = stackalloc byte[4];
        return TryEncode(value, encoded, out int length) ? WithText(encoded[..length], static (encoded, mine) => mine.LastIndexOf(encoded)) : NotFound;
    }

    /// <summary>The byte offset of the last occurrence of <paramref name="value"/>, or -1.</summary>
    /// <exception cref="ObjectDisposedException">Either string was freed.</exception>
    public int LastIndexOf(FixedUtf8String value) => Compare(value, static (mine, theirs) => mine.LastIndexOf(theirs));

    /// <summary>Whether the string starts with <paramref name="value"/>.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="value"/> is null.</exception>
    /// <exception cref="ObjectDisposedException">The string was freed.</exception>
    public bool StartsWith(string value)
    {
        ArgumentNullException.ThrowIfNull(value);
        return WithUtf8(value, this, static (encoded, mine) => mine.StartsWith(encoded), fallback: false);
    }

    /// <summary>Whether the string starts with <paramref name="value"/>.</summary>
    /// <exception cref="ObjectDisposedException">Either string was freed.</exception>
    public bool StartsWith(FixedUtf8String value) => Compare(value, static (mine, theirs) => mine.StartsWith(theirs));

    /// <summary>Whether the string ends with <paramref name="value"/>.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="value"/> is null.</exception>
    /// <exception cref="ObjectDisposedException">The string was freed.</exception>
    public bool EndsWith(string value)
    {
        ArgumentNullException.ThrowIfNull(value);
        return WithUtf8(value, this, static (encoded, mine) => mine.EndsWith(encoded), fallback: false);
    }

    /// <summary>Whether the string ends with <paramref name="value"/>.</summary>
    /// <exception cref="ObjectDisposedException">Either string was freed.</exception>
    public bool EndsWith(FixedUtf8String value) => Compare(value, static (mine, theirs) => mine.EndsWith(theirs));

    /// <summary>A new string (new native memory) of the bytes from <paramref name="startIndex"/> to the end.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="startIndex"/> is outside the string.</exception>
    /// <exception cref="ArgumentException">The offset falls inside a multi-byte character.</exception>
    /// <exception cref="ObjectDisposedException">The string was freed.</exception>
    public FixedUtf8String Substring(int startIndex) => Substring(startIndex, Length - startIndex);

    /// <summary>A new string (new native memory) of <paramref name="length"/> bytes from <paramref name="startIndex"/>.</summary>
    /// <exception cref="ArgumentOutOfRangeException">The range is outside the string.</exception>
    /// <exception cref="ArgumentException">The range cuts a multi-byte character.</exception>
    /// <exception cref="ObjectDisposedException">The string was freed.</exception>
    public FixedUtf8String Substring(int startIndex, int length)
    {
        using MemoryLease<byte> lease = Open();
        ReadOnlySpan<byte> bytes = Text(lease.Span);
        RangeGuard.CheckRange(startIndex, length, bytes.Length, nameof(startIndex), nameof(length), "string");
        ReadOnlySpan<byte> part = bytes.Slice(startIndex, length);
        if (!Utf8.IsValid(part))
        {
            // The argument that cuts: the start if it falls on a continuation byte, otherwise the end.
            string cut = startIndex < bytes.Length && (bytes[startIndex] & 0xC0) == 0x80 ? nameof(startIndex) : nameof(length);
            ThrowHelper.ThrowArgument(cut, $"The range [{startIndex}, {startIndex}+{length}) cuts a multi-byte UTF-8 character (at byte {startIndex + FirstInvalidOffset(part)}).");
        }

        return new FixedUtf8String(part);
    }

    /// <summary>Adds one to the string's reference count: until the matching <see cref="Release"/>, freeing it throws.</summary>
    /// <exception cref="ObjectDisposedException">The string was freed or is <see langword="default"/>.</exception>
    public void Acquire() => _buffer.Block.Acquire(TypeName);

    /// <summary>Takes one from the string's reference count.</summary>
    /// <exception cref="ObjectDisposedException">The string was freed or is <see langword="default"/>.</exception>
    /// <exception cref="InvalidOperationException">It was released more times than acquired.</exception>
    public void Release() => _buffer.Block.Release(TypeName);

    /// <summary>Frees the memory; every copy becomes invalid.</summary>
    /// <exception cref="ObjectDisposedException">It was already freed, or is <see langword="default"/>.</exception>
    /// <exception cref="InvalidOperationException">It is acquired.</exception>
    public void Free() => _buffer.Block.Free(TypeName);

    /// <summary>Whether both hold the same bytes.</summary>
    /// <exception cref="ObjectDisposedException">One of them was freed.</exception>
    public static bool operator ==(FixedUtf8String left, FixedUtf8String right) => left.Equals(right);

    /// <summary>Whether they hold different bytes.</summary>
    /// <exception cref="ObjectDisposedException">One of them was freed.</exception>
    public static bool operator !=(FixedUtf8String left, FixedUtf8String right) => !left.Equals(right);

    /// <summary>Whether <paramref name="left"/> holds the UTF-8 encoding of <paramref name="right"/>.</summary>
    /// <exception cref="ObjectDisposedException"><paramref name="left"/> was freed.</exception>
    public static bool operator ==(FixedUtf8String left, string? right) => left.Equals(right);

    /// <summary>Whether <paramref name="left"/> does not hold the UTF-8 encoding of <paramref name="right"/>.</summary>
    /// <exception cref="ObjectDisposedException"><paramref name="left"/> was freed.</exception>
    public static bool operator !=(FixedUtf8String left, string? right) => !left.Equals(right);

    /// <summary>Whether <paramref name="right"/> holds the UTF-8 encoding of <paramref name="left"/>.</summary>
    /// <exception cref="ObjectDisposedException"><paramref name="right"/> was freed.</exception>
    public static bool operator ==(string? left, FixedUtf8String right) => right.Equals(left);

    /// <summary>Whether <paramref name="right"/> does not hold the UTF-8 encoding of <paramref name="left"/>.</summary>
    /// <exception cref="ObjectDisposedException"><paramref name="right"/> was freed.</exception>
    public static bool operator !=(string? left, FixedUtf8String right) => !right.Equals(left);

    /// <summary>Ordinal less-than.</summary>
    /// <exception cref="ObjectDisposedException">One of them was freed.</exception>
    public static bool operator <(FixedUtf8String left, FixedUtf8String right) => left.CompareTo(right) < 0;

    /// <summary>Ordinal less-than-or-equal.</summary>
    /// <exception cref="ObjectDisposedException">One of them was freed.</exception>
    public static bool operator <=(FixedUtf8String left, FixedUtf8String right) => left.CompareTo(right) <= 0;

    /// <summary>Ordinal greater-than.</summary>
    /// <exception cref="ObjectDisposedException">One of them was freed.</exception>
    public static bool operator >(FixedUtf8String left, FixedUtf8String right) => left.CompareTo(right) > 0;

    /// <summary>Ordinal greater-than-or-equal.</summary>
    /// <exception cref="ObjectDisposedException">One of them was freed.</exception>
    public static bool operator >=(FixedUtf8String left, FixedUtf8String right) => left.CompareTo(right) >= 0;

    private delegate TResult Utf8Operation<TResult>(ReadOnlySpan<byte> encoded, ReadOnlySpan<byte> mine);

    /// <summary>A lease for the string's own operations; an empty one for <see langword="default"/>, which reads as the empty string.</summary>
    private MemoryLease<byte> Open() => _buffer == default ? default : _buffer.BeginOperation(TypeName);

    /// <summary>The text of a leased buffer: without the terminating zero.</summary>
    private static ReadOnlySpan<byte> Text(ReadOnlySpan<byte> withTerminator) => withTerminator.IsEmpty ? default : withTerminator[..^1];

    private TResult Compare<TResult>(FixedUtf8String other, Utf8Operation<TResult> operation)
    {
        using MemoryLease<byte> mine = Open();
        using MemoryLease<byte> theirs = other.Open();
        return operation(Text(mine.Span), Text(theirs.Span));
    }

    private TResult WithText<TResult>(ReadOnlySpan<byte> encoded, Utf8Operation<TResult> operation)
    {
        using MemoryLease<byte> lease = Open();
        return operation(encoded, Text(lease.Span));
    }

    private static TResult WithUtf8<TResult>(string value, FixedUtf8String self, Utf8Operation<TResult> operation, TResult fallback)
    {
        using MemoryLease<byte> lease = self.Open();
        return WithUtf8(value, Text(lease.Span), operation, fallback);
    }

    /// <summary>
    /// Encodes <paramref name="value"/> (on the stack when small) and runs <paramref name="operation"/>;
    /// <paramref name="fallback"/> for invalid UTF-16, and for a value whose encoding is longer than
    /// <paramref name="mine"/> (which then can neither hold it nor equal it, so every operation's
    /// answer is its fallback).
    /// </summary>
    private static TResult WithUtf8<TResult>(string value, ReadOnlySpan<byte> mine, Utf8Operation<TResult> operation, TResult fallback)
    {
        // Up to three bytes per UTF-16 code unit, computed in a long (it can pass int.MaxValue); the
        // scratch need not be longer than this string, as an encoding that does not fit cannot match.
        int maxBytes = (int)Math.Min(3L * value.Length, mine.Length);
        byte[]? rented = null;
        Span<byte> scratch = maxBytes <= StackLimit ? stackalloc byte[StackLimit] : (rented = ArrayPool<byte>.Shared.Rent(maxBytes));
        try
        {
            OperationStatus status = Utf8.FromUtf16(value, scratch, out _, out int written, replaceInvalidSequences: false);
            return status == OperationStatus.Done ? operation(scratch[..written], mine) : fallback;
        }
        finally
        {
            if (rented is not null)
            {
                ArrayPool<byte>.Shared.Return(rented);
            }
        }
    }

    /// <summary>Throws unless <paramref name="byteCount"/> UTF-8 bytes (negative: more than an int counts) fit, with the terminating zero.</summary>
    private static void CheckLength(int byteCount, int sourceLength, string paramName)
    {
        if ((uint)byteCount > MaxLength)
        {
            ThrowHelper.ThrowArgumentOutOfRange(paramName, sourceLength, $"The text takes {(byteCount < 0 ? "more than int.MaxValue" : $"{byteCount:N0}")} UTF-8 bytes; a FixedUtf8String holds at most {MaxLength:N0} (int.MaxValue less one, for the terminating zero).");
        }
    }

    private static bool TryEncode(char value, Span<byte> destination, out int length)
    {
        if (char.IsSurrogate(value))
        {
            length = 0;
            return false;
        }

        length = new Rune(value).EncodeToUtf8(destination);
        return true;
    }

    private static int FirstInvalidOffset(ReadOnlySpan<byte> utf8)
    {
        int offset = 0;
        while (offset < utf8.Length)
        {
            if (Rune.DecodeFromUtf8(utf8[offset..], out _, out int consumed) != OperationStatus.Done)
            {
                return offset;
            }

            offset += consumed;
        }

        return offset;
    }
}
