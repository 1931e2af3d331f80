using System.Buffers.Binary;
using jemalloc.Benchmarks.Infrastructure;

namespace jemalloc.Cli.Caching;

/// <summary>
/// The keys and values of <c>jembench cache</c>, made from a key's index alone, so every process makes the
/// same ones: a key is 16 to 40 ASCII bytes that start with its index in hex; a value starts with its key's
/// index, its version and its length and ends with a check of the three, so a read can prove it is the
/// value written for its key (see <see cref="Check"/>).
/// </summary>
public static class CacheData
{
    /// <summary>The shortest key, in bytes.</summary>
    public const int MinKeyLength = 16;

    /// <summary>The longest key, in bytes.</summary>
    public const int MaxKeyLength = 40;

    /// <summary>The shortest value: its header (index, version, length) and its check.</summary>
    public const int MinValueLength = HeaderLength + CheckLength;

    /// <summary>The longest value of the server shape.</summary>
    public const int MaxValueLength = ushort.MaxValue;

    /// <summary>The server shape's median value length.</summary>
    public const double MedianValueLength = 200;

    /// <summary>The server shape's 99th-percentile value length.</summary>
    public const double P99ValueLength = 4096;

    private const int HeaderLength = 16;
    private const int CheckLength = 8;
    private const ulong KeySalt = 0x5bd1_e995_1234_5678;
    private const ulong SizeSalt = 0x9e37_79b9_7f4a_7c15;
    private const ulong ExpirySalt = 0xc2b2_ae3d_27d4_eb4f;

    // The normal quantile of 0.99: log-normal sizes with sigma = ln(p99 / median) / z99 have that p99.
    private const double Z99 = 2.326_347_874;
    private static readonly double Mu = Math.Log(MedianValueLength);
    private static readonly double Sigma = Math.Log(P99ValueLength / MedianValueLength) / Z99;
    private static readonly byte[] Filler = "abcdefghijklmnopqrstuvwxyz0123456789-_abcdefghijklmnopqrstuvwxyz0123456789"u8.ToArray();
    private static readonly byte[] Hex = "0123456789abcdef"u8.ToArray();

    // The switch that corrupts one read's check, once per side (jembench's tests prove the checks catch it).
    private static int _corrupted;

    /// <summary>SplitMix64's finalizer: a well-mixed 64-bit hash of <paramref name="x"/>.</summary>
    public static ulong Mix(ulong x)
    {
        x += 0x9e37_79b9_7f4a_7c15;
        x = (x ^ (x >> 30)) * 0xbf58_476d_1ce4_e5b9;
        x = (x ^ (x >> 27)) * 0x94d0_49bb_1331_11eb;
        return x ^ (x >> 31);
    }

    /// <summary>The length of key <paramref name="index"/>: 16 to 40 bytes.</summary>
    public static int KeyLength(int index) => MinKeyLength + (int)(Mix((ulong)index ^ KeySalt) % (MaxKeyLength - MinKeyLength + 1));

    /// <summary>Writes key <paramref name="index"/>'s ASCII bytes to <paramref name="destination"/> (at least <see cref="MaxKeyLength"/> long).</summary>
    /// <returns>The key's length.</returns>
    public static int WriteKey(int index, Span<byte> destination)
    {
        int length = KeyLength(index);
        // Its index in hex first, which makes every key distinct; then filler of the key's length.
        for (int i = 0; i < 8; i++)
        {
            destination[i] = Hex[(index >> (28 - (4 * i))) & 0xF];
        }

        int start = (int)(Mix((ulong)index) % 36);
        Filler.AsSpan(start, length - 8).CopyTo(destination[8..]);
        return length;
    }

    /// <summary>Key <paramref name="index"/> as a string (its ASCII bytes as chars).</summary>
    public static string KeyString(int index) => string.Create(KeyLength(index), index, static (chars, i) =>
    {
        Span<byte> bytes = stackalloc byte[MaxKeyLength];
        _ = WriteKey(i, bytes);
        for (int c = 0; c < chars.Length; c++)
        {
            chars[c] = (char)bytes[c];
        }
    });

    /// <summary>Key <paramref name="index"/>'s value length on the server shape: log-normal, median 200 bytes, p99 about 4 KiB.</summary>
    public static int ServerValueLength(int index)
    {
        ulong h = Mix((ulong)index ^ SizeSalt);
        double u1 = ((h >> 11) + 1) / 9_007_199_254_740_993.0;
        double u2 = (Mix(h) >> 11) / 9_007_199_254_740_992.0;
        double z = Math.Sqrt(-2 * Math.Log(u1)) * Math.Cos(2 * Math.PI * u2);
        return (int)Math.Clamp(Math.Exp(Mu + (Sigma * z)), MinValueLength, MaxValueLength);
    }

    /// <summary>Key <paramref name="index"/>'s value length on BitFaster's shapes: 24 to 64 bytes.</summary>
    public static int SmallValueLength(int index) => MinValueLength + (int)(Mix((ulong)index ^ SizeSalt) % 41);

    /// <summary>
    /// Key <paramref name="index"/>'s lifetime in the expiry phase: 1 to 5 seconds for 30% of the keys, none
    /// (<see cref="TimeSpan.Zero"/>) for the others.
    /// </summary>
    public static TimeSpan Lifetime(int index)
    {
        ulong h = Mix((ulong)index ^ ExpirySalt);
        return h % 10 < 3 ? TimeSpan.FromMilliseconds(1000 + (double)((h >> 8) % 4001)) : TimeSpan.Zero;
    }

    /// <summary>
    /// With jembench's hidden fault switch on (<see cref="BrokenResultSwitch"/>), the next value checked is corrupted
    /// before its check: each side calls this as it starts, so each side's first read is.
    /// </summary>
    public static void CorruptNextCheck() => Volatile.Write(ref _corrupted, 0);

    /// <summary>Writes key <paramref name="index"/>'s value of version <paramref name="version"/> over the whole of <paramref name="value"/>'s ends.</summary>
    public static void WriteValue(Span<byte> value, int index, int version)
    {
        BinaryPrimitives.WriteInt64LittleEndian(value, index);
        BinaryPrimitives.WriteInt32LittleEndian(value[8..], version);
        BinaryPrimitives.WriteInt32LittleEndian(value[12..], value.Length);
        BinaryPrimitives.WriteUInt64LittleEndian(value[^CheckLength..], CheckOf(index, version, value.Length));
    }

    /// <summary>
    /// Checks that <paramref name="value"/>, read for key <paramref name="key"/>, was written for that key with
    /// a version that was written (from 1 to the key's latest) and the key's length, and is whole.
    /// </summary>
    /// <exception cref="BenchmarkVerificationException">It was not: the message names the side, the key and what is wrong.</exception>
    public static void Check(string side, CacheKeySpace space, int key, ReadOnlySpan<byte> value)
    {
        ArgumentNullException.ThrowIfNull(space);
        if (value.Length < MinValueLength)
        {
            throw new BenchmarkVerificationException($"cache ({side}): the value read for key {key} has {value.Length} bytes, fewer than any value written.");
        }

        long index = BinaryPrimitives.ReadInt64LittleEndian(value);
        int version = BinaryPrimitives.ReadInt32LittleEndian(value[8..]);
        int length = BinaryPrimitives.ReadInt32LittleEndian(value[12..]);
        ulong check = BinaryPrimitives.ReadUInt64LittleEndian(value[^CheckLength..]);
        if (BrokenResultSwitch.IsOn && Interlocked.Exchange(ref _corrupted, 1) == 0)
        {
            string? position = BrokenResultSwitch.Setting;
            index ^= position is BrokenResultSwitch.Everywhere or BrokenResultSwitch.First ? 1 : 0;
            version ^= position is BrokenResultSwitch.Everywhere or BrokenResultSwitch.Middle ? 1 << 20 : 0;
            check ^= position is BrokenResultSwitch.Everywhere or BrokenResultSwitch.Last ? 1UL : 0;
        }

        if (index != key)
        {
            throw new BenchmarkVerificationException($"cache ({side}): the value read for key {key} was written for key {index}.");
        }

        int latest = space.LatestVersion(key);
        if (version < 1 || version > latest)
        {
            throw new BenchmarkVerificationException($"cache ({side}): the value read for key {key} has version {version}, which was never written (versions 1 to {latest} were).");
        }

        if (length != value.Length || length != space.ValueLength(key))
        {
            throw new BenchmarkVerificationException($"cache ({side}): the value read for key {key} has {value.Length} bytes; its header says {length} and the key's values have {space.ValueLength(key)}.");
        }

        if (check != CheckOf(index, version, length))
        {
            throw new BenchmarkVerificationException($"cache ({side}): the value read for key {key} (version {version}) fails its check: its last bytes are not what was written.");
        }
    }

    private static ulong CheckOf(long index, int version, int length) => Mix(Mix((ulong)index) ^ ((ulong)(uint)version << 32) ^ (uint)length);
}
