using System.Runtime.CompilerServices;

namespace jemalloc.Caching;

/// <summary>
/// The layout of one entry in a segment, 8-byte aligned: a 16-byte header (key length, value length,
/// the key's 32-bit hash, and a word of the index tag and flags), then for an entry that expires its
/// deadline (8 bytes), its sliding window (8 more if it slides) and its absolute deadline (8 more if it
/// slides and has one too), then the key's bytes, then the value's.
/// </summary>
/// <remarks>Every read and write of an entry happens under its shard's lock, so plain loads and stores suffice.</remarks>
internal static unsafe class CacheEntry
{
    internal const int HeaderBytes = 16;

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

    internal static int KeyLength(byte* entry) => *(int*)entry;

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

    internal static long Size(byte* entry) => SizeOf(KeyLength(entry), ValueLength(entry), ExpiryBytes(entry));

    /// <summary>Writes the header and the expiry fields; the key and value follow at <see cref="Key"/>.</summary>
    internal static void WriteHeader(byte* entry, int keyLength, int valueLength, uint hash, ushort tag, in CacheExpiry expiry, int hits)
    {
        *(int*)entry = keyLength;
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
