using System.Buffers.Binary;

namespace jemalloc.Caching.Tests;

/// <summary>
/// Values that say what they are: a value for a key and version is the version, the key's hash and
/// bytes drawn from both, so a read can tell a right value from a torn, stale or other key's one.
/// </summary>
internal static class TestValues
{
    private const int HeaderBytes = 8;

    internal static byte[] Make(string key, int version, int length)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(length, HeaderBytes);
        byte[] value = new byte[length];
        BinaryPrimitives.WriteInt32LittleEndian(value, version);
        BinaryPrimitives.WriteInt32LittleEndian(value.AsSpan(4), StableHash(key));
        new Random(Seed(key, version)).NextBytes(value.AsSpan(HeaderBytes));
        return value;
    }

    /// <summary>The version of a value made for <paramref name="key"/>, after checking every byte of it.</summary>
    internal static int VersionOf(string key, ReadOnlySpan<byte> value)
    {
        Assert.True(value.Length >= HeaderBytes, $"A value of {value.Length} bytes for '{key}' is too short to be one of the test's.");
        int version = BinaryPrimitives.ReadInt32LittleEndian(value);
        Assert.True(BinaryPrimitives.ReadInt32LittleEndian(value[4..]) == StableHash(key), $"The value read for '{key}' was written for another key.");
        byte[] expected = new byte[value.Length - HeaderBytes];
        new Random(Seed(key, version)).NextBytes(expected);
        Assert.True(value[HeaderBytes..].SequenceEqual(expected), $"The value read for '{key}' (version {version}) is not the one written.");
        return version;
    }

    private static int Seed(string key, int version) => StableHash(key) ^ (version * 486187739);

    // string.GetHashCode would do within one process; FNV-1a keeps the values the same from run to run.
    private static int StableHash(string key)
    {
        uint hash = 2166136261;
        foreach (char c in key)
        {
            hash = (hash ^ c) * 16777619;
        }

        return (int)hash;
    }
}
