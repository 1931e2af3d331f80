namespace jemalloc.Cli.Strings;

/// <summary>Compares UTF-8 keys byte by byte, held as arrays or looked up as spans with the same hash.</summary>
internal sealed class Utf8KeyComparer : IEqualityComparer<byte[]>, IAlternateEqualityComparer<ReadOnlySpan<byte>, byte[]>
{
    public static readonly Utf8KeyComparer Instance = new();

    private Utf8KeyComparer()
    {
    }

    public bool Equals(byte[]? x, byte[]? y) => x is null || y is null ? ReferenceEquals(x, y) : x.AsSpan().SequenceEqual(y);

    public int GetHashCode(byte[] obj) => Hash(obj);

    public bool Equals(ReadOnlySpan<byte> alternate, byte[] other) => alternate.SequenceEqual(other);

    public int GetHashCode(ReadOnlySpan<byte> alternate) => Hash(alternate);

    public byte[] Create(ReadOnlySpan<byte> alternate) => alternate.ToArray();

    private static int Hash(ReadOnlySpan<byte> bytes)
    {
        var hash = default(HashCode);
        hash.AddBytes(bytes);
        return hash.ToHashCode();
    }
}
