using System.Runtime.CompilerServices;

namespace jemalloc.Caching;

/// <summary>
/// The layout of one entry in a segment, 8-byte aligned: a 16-byte header (key length and slack, value
/// length, the key's 32-bit hash, and a word of the index tag and flags), then for an entry that expires its
/// deadline (8 bytes), its sliding window (8 more if it slides) and its absolute deadline (8 more if it
/// slides and has one too), then the key's bytes, then the value's, then its slack: bytes left over when
/// a value was replaced in place by a shorter one (in eighths, in the key length's top 15 bits), so the
/// walk of a segment from entry to entry still finds the next one.
/// </summary>
/// <remarks>Every read and write of an entry happens under its shard's lock, so plain loads and stores suffice.</remarks>
internal static unsafe class CacheEntry
{
    internal const int HeaderBytes = 16;

    /// <summary>The cache line size the index's reach hint counts in.</summary>
    internal const int LineBytes = 64;

    /// <summary>The most lines the reach hint counts (12 bits); a value that ends further saturates it.</summary>
    internal const int MaxReachLines = 0xFFF;

    /// <summary>The most slack an entry can carry (15 bits of eighths); a replacement that would leave more appends instead.</summary>
    internal const long MaxSlackBytes = ((1L << 15) - 1) * 8;

    // A key is at most 65,536 bytes: 17 bits; the word's other 15 hold the slack in eighths.
    private const uint KeyLengthMask = (1u << 17) - 1;
    private const int SlackShift = 17;

    private const uint TagMask = 0xFFFF;
    private const uint DeadFlag = 1u << 16;
    private const uint ExpiresFlag = 1u << 17;
    private const uint SlidingFlag = 1u << 18;
    private const uint SlidingAndAbsoluteFlag = 1u << 19;
    private const int HitsShift = 20;
    private const uint HitsMask = 3u << HitsShift;

    /// <summary>The entry's size in its segment.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static long SizeOf(int keyLength, long valueLength, int expiryBytes) =>
        (HeaderBytes + expiryBytes + keyLength + valueLength + 7) & ~7L;

    /// <summary>The bytes of expiry fields an entry with these settings carries.</summary>
    internal static int ExpiryBytesFor(bool expires, bool sliding, bool slidingAndAbsolute) =>
        !expires ? 0 : !sliding ? 8 : slidingAndAbsolute ? 24 : 16;

    internal static int KeyLength(byte* entry) => (int)(*(uint*)entry & KeyLengthMask);

    /// <summary>The bytes after the value that belong to no one (left by an in-place replacement with a shorter value).</summary>
    internal static long Slack(byte* entry) => (long)(*(uint*)entry >> SlackShift) << 3;

    /// <summary>Drops the slack (the entry was copied without it).</summary>
    internal static void ClearSlack(byte* entry) => *(uint*)entry &= KeyLengthMask;

    internal static int ValueLength(byte* entry) => *(int*)(entry + 4);

    internal static uint Hash(byte* entry) => *(uint*)(entry + 8);

    internal static ushort Tag(byte* entry) => (ushort)(Meta(entry) & TagMask);

    internal static bool IsDead(byte* entry) => (Meta(entry) & DeadFlag) != 0;

    internal static void MarkDead(byte* entry) => Meta(entry) |= DeadFlag;

    internal static bool Expires(byte* entry) => (Meta(entry) & ExpiresFlag) != 0;

    internal static bool Slides(byte* entry) => (Meta(entry) & SlidingFlag) != 0;

    internal static int Hits(byte* entry) => (int)((Meta(entry) & HitsMask) >> HitsShift);

    internal static void SetHits(byte* entry, int hits) =>
        Meta(entry) = (Meta(entry) & ~HitsMask) | ((uint)Math.Clamp(hits, 0, 3) << HitsShift);

    /// <summary>Counts a read, saturating at 3.</summary>
    internal static void AddHit(byte* entry)
    {
        uint meta = Meta(entry);
        if ((meta & HitsMask) != HitsMask)
        {
            Meta(entry) = meta + (1u << HitsShift);
        }
    }

    internal static int ExpiryBytes(byte* entry)
    {
        uint meta = Meta(entry);
        return ExpiryBytesFor((meta & ExpiresFlag) != 0, (meta & SlidingFlag) != 0, (meta & SlidingAndAbsoluteFlag) != 0);
    }

    /// <summary>The deadline in milliseconds of an entry that expires.</summary>
    internal static ref long Deadline(byte* entry) => ref *(long*)(entry + HeaderBytes);

    /// <summary>Pushes a sliding entry's deadline to <paramref name="nowMs"/> plus its window, never past its absolute deadline.</summary>
    internal static void Slide(byte* entry, long nowMs)
    {
        uint meta = Meta(entry);
        if ((meta & SlidingFlag) == 0)
        {
            return;
        }

        long window = *(long*)(entry + HeaderBytes + 8);
        long deadline = SaturatingAdd(nowMs, window);
        if ((meta & SlidingAndAbsoluteFlag) != 0)
        {
            deadline = Math.Min(deadline, *(long*)(entry + HeaderBytes + 16));
        }

        Deadline(entry) = deadline;
    }

    internal static byte* Key(byte* entry) => entry + HeaderBytes + ExpiryBytes(entry);

    internal static byte* Value(byte* entry) => Key(entry) + KeyLength(entry);

    /// <summary>How many cache lines past the entry's first line its value's last byte lies, at most <see cref="MaxReachLines"/>.</summary>
    internal static int LastLine(byte* entry)
    {
        nuint first = (nuint)entry / LineBytes;
        nuint last = (nuint)(Value(entry) + Math.Max(ValueLength(entry) - 1, 0)) / LineBytes;
        return (int)Math.Min(last - first, MaxReachLines);
    }

    /// <summary>The bytes the entry takes in its segment, slack included.</summary>
    internal static long Size(byte* entry) => SizeOf(KeyLength(entry), ValueLength(entry), ExpiryBytes(entry)) + Slack(entry);

    /// <summary>The bytes a copy of the entry needs: its size without the slack.</summary>
    internal static long CompactSize(byte* entry) => SizeOf(KeyLength(entry), ValueLength(entry), ExpiryBytes(entry));

    /// <summary>
    /// Writes the header and the expiry fields; the key and value follow at <see cref="Key"/>. The
    /// <c>slack</c> is the bytes after the value that stay the entry's (a multiple of 8, at most <see cref="MaxSlackBytes"/>).
    /// </summary>
    internal static void WriteHeader(byte* entry, int keyLength, int valueLength, uint hash, ushort tag, in CacheExpiry expiry, int hits, long slack = 0)
    {
        *(uint*)entry = (uint)keyLength | ((uint)(slack >> 3) << SlackShift);
        *(int*)(entry + 4) = valueLength;
        *(uint*)(entry + 8) = hash;
        uint meta = tag | ((uint)hits << HitsShift);
        if (expiry.Expires)
        {
            meta |= ExpiresFlag;
            *(long*)(entry + HeaderBytes) = expiry.DeadlineMs;
            if (expiry.SlidingMs > 0)
            {
                meta |= SlidingFlag;
                *(long*)(entry + HeaderBytes + 8) = expiry.SlidingMs;
                if (expiry.AbsoluteMs != long.MaxValue)
                {
                    meta |= SlidingAndAbsoluteFlag;
                    *(long*)(entry + HeaderBytes + 16) = expiry.AbsoluteMs;
                }
            }
        }

        *(uint*)(entry + 12) = meta;
    }

    internal static long SaturatingAdd(long a, long b)
    {
        long sum = a + b;
        return ((a ^ sum) & (b ^ sum)) < 0 ? long.MaxValue : sum;
    }

    private static ref uint Meta(byte* entry) => ref *(uint*)(entry + 12);
}
