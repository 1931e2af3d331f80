using System.Text;

namespace jemalloc.Benchmarks.Records;

/// <summary>
/// The records of <c>jembench records</c>, computed from the row number alone so every side builds
/// exactly the same table and the request loop can check a lookup against the source.
/// </summary>
public static class RecordData
{
    /// <summary>The syllables names start with; each is also a scan prefix (some are not ASCII).</summary>
    public static readonly string[] Prefixes =
    [
        "Al", "Bé", "Car", "Dö", "El", "Fa", "Gü", "Ha", "Iñ", "Jo", "Ka", "Lé", "Mo",
        "Nø", "Ol", "Pa", "Qu", "Ro", "Sä", "Ta", "Ul", "Vé", "Wi", "Xa", "Yo", "Zé",
    ];

    /// <summary><see cref="Prefixes"/> in UTF-8.</summary>
    public static readonly byte[][] Utf8Prefixes = [.. Prefixes.Select(Encoding.UTF8.GetBytes)];

    private static readonly string[] Syllables = ["ra", "mi", "ko", "lé", "su", "nå", "te", "ri", "ßa", "do", "vi", "çe", "lo", "an"];
    private static readonly DateTime Epoch = new(2020, 1, 1, 0, 0, 0, DateTimeKind.Utc);

    /// <summary>The id of row <paramref name="row"/>: sparse, so an index is needed.</summary>
    public static long IdOf(long row) => 1_000 + (row * 3);

    /// <summary>The row of <paramref name="id"/>.</summary>
    public static long RowOf(long id) => (id - 1_000) / 3;

    /// <summary>The category of a record.</summary>
    public static int CategoryOf(long id) => (int)(Mix((ulong)id) % 100);

    /// <summary>The score of a record, in [0, 100).</summary>
    public static double ScoreOf(long id) => (Mix((ulong)id ^ 0x5DEECE66DUL) >> 11) * (100.0 / (1UL << 53));

    /// <summary>The last update time of a record.</summary>
    public static DateTime UpdatedOf(long id) => Epoch.AddSeconds(Mix((ulong)id ^ 0xABCDEFUL) % (5UL * 365 * 86_400));

    /// <summary>Name number <paramref name="version"/> of a record (0 when built): 8-40 characters starting with a prefix.</summary>
    public static string NameOf(long id, int version)
    {
        ulong h = Mix((ulong)id * 31 + (ulong)version);
        int length = 8 + (int)(h % 33);
        return string.Create(length, h, static (span, seed) =>
        {
            string first = Prefixes[(int)((seed >> 8) % (ulong)Prefixes.Length)];
            first.AsSpan().CopyTo(span);
            int at = first.Length;
            ulong state = seed;
            while (at < span.Length)
            {
                state = Mix(state + 0x9E3779B97F4A7C15UL);
                string syllable = Syllables[(int)(state % (ulong)Syllables.Length)];
                int take = Math.Min(syllable.Length, span.Length - at);
                syllable.AsSpan(0, take).CopyTo(span[at..]);
                at += take;
            }
        });
    }

    /// <summary>A 64-bit mixing function (SplitMix64's finalizer).</summary>
    public static ulong Mix(ulong x)
    {
        x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9UL;
        x = (x ^ (x >> 27)) * 0x94D049BB133111EBUL;
        return x ^ (x >> 31);
    }

    /// <summary>A hash of a string's UTF-16 code units (FNV-1a), the same on every side.</summary>
    public static ulong HashOf(string text)
    {
        ulong hash = 14_695_981_039_346_656_037UL;
        foreach (char c in text)
        {
            hash = (hash ^ c) * 1_099_511_628_211UL;
        }

        return hash;
    }
}
