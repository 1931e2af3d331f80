using System.Buffers.Binary;

namespace jemalloc.Tests.Caching;

/// <summary>Values whose bytes say which key and version wrote them, so a read can be checked against the write.</summary>
internal static class CacheTestData
{
    /// <summary>A value of <paramref name="length"/> bytes for <paramref name="key"/>, version <paramref name="version"/>.</summary>
    internal static byte[] Value(long key, long version, int length)
    {
        byte[] value = new byte[length];
        Fill(value, key, version);
        return value;
    }

    /// <summary>Fills <paramref name="value"/> as <see cref="Value"/> does.</summary>
    internal static void Fill(Span<byte> value, long key, long version)
    {
        ulong seed = (ulong)key * 0x9E3779B97F4A7C15UL ^ (ulong)version * 0xC2B2AE3D27D4EB4FUL;
        for (int i = 0; i < value.Length; i++)
        {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            value[i] = (byte)seed;
        }

        if (value.Length >= 16)
        {
            BinaryPrimitives.WriteInt64LittleEndian(value, key);
            BinaryPrimitives.WriteInt64LittleEndian(value[8..], version);
        }
    }

    /// <summary>Whether <paramref name="value"/> is exactly what <see cref="Value"/> gives for its key and version (read from its first 16 bytes).</summary>
    internal static bool IsIntact(ReadOnlySpan<byte> value, long expectedKey, out long version)
    {
        version = -1;
        if (value.Length < 16 || BinaryPrimitives.ReadInt64LittleEndian(value) != expectedKey)
        {
            return false;
        }

        version = BinaryPrimitives.ReadInt64LittleEndian(value[8..]);
        Span<byte> expected = value.Length <= 4096 ? stackalloc byte[value.Length] : new byte[value.Length];
        Fill(expected, expectedKey, version);
        return value.SequenceEqual(expected);
    }

    /// <summary>A key's bytes.</summary>
    internal static byte[] Key(long key) => BitConverter.GetBytes(key);
}
