using System.Text;
using jemalloc.Benchmarks.Records;
using ParquetSharp;
using Encoding = System.Text.Encoding;

namespace jemalloc.Cli.Strings;

/// <summary>
/// The table of <c>jembench strings</c>: <c>id</c> (INT64, the row number), <c>category</c> (STRING,
/// 8-40 bytes, <see cref="Categories"/> distinct values), <c>region</c> (STRING, 8-40 bytes,
/// <see cref="Regions"/> distinct), <c>note</c> (STRING, 50-300 bytes of words, some of them not
/// ASCII; about 4% null) and <c>amount</c> (DECIMAL(18,2), about 3% null). Every value is a function of
/// its row alone, so the right results are computed while the table is made.
/// </summary>
public static class StringsData
{
    /// <summary>Distinct categories.</summary>
    public const int Categories = 3_000;

    /// <summary>Distinct regions.</summary>
    public const int Regions = 300;

    /// <summary>The shortest and the longest note, in UTF-8 bytes.</summary>
    public const int MinNoteBytes = 50;

    /// <inheritdoc cref="MinNoteBytes"/>
    public const int MaxNoteBytes = 300;

    /// <summary>The precision and scale of <c>amount</c>.</summary>
    public const int AmountPrecision = 18;

    /// <inheritdoc cref="AmountPrecision"/>
    public const int AmountScale = 2;

    /// <summary>Rows per row group of the file.</summary>
    public const long RowGroupRows = 1L << 20;

    /// <summary>
    /// The prefix the filter keeps: about 3% of the notes start with it; about as many start with a
    /// longer word that shares all but its last character ("Überfällige"), and more with "Über", so a
    /// filter that compares too few bytes is caught.
    /// </summary>
    public const string NotePrefix = "Überfällig:";

    private const ulong Seed = 0xD1B5_4A32_D192_ED03UL;

    private static readonly string[] Starts = ["Überfällig: ", "Überfällige ", "Über ", "Note ", "Call ", "Order ", "Rückruf ", "Ticket ", "Review ", "Visit "];

    private static readonly byte[][] Words = [.. new[]
    {
        "the", "customer", "asked", "for", "a", "refund", "of", "delivery", "late", "again", "invoice", "paid",
        "café", "naïve", "Straße", "größer", "déjà", "vu", "señor", "Ελλάδα", "日本語", "€", "Zürich", "São",
        "shipment", "warehouse", "pallet", "boxes", "damaged", "replaced", "contract", "renewal", "discount",
        "please", "call", "back", "tomorrow", "morning", "urgent", "review", "pending", "approved", "rejected",
    }.Select(Encoding.UTF8.GetBytes)];

    private static readonly byte[][] CategoryNames = [.. Enumerable.Range(0, Categories).Select(c => NameOf("cat", c))];
    private static readonly byte[][] RegionNames = [.. Enumerable.Range(0, Regions).Select(r => NameOf("region", r))];

    /// <summary>Category <paramref name="index"/>'s UTF-8 bytes.</summary>
    public static ReadOnlySpan<byte> CategoryName(int index) => CategoryNames[index];

    /// <summary>Region <paramref name="index"/>'s UTF-8 bytes.</summary>
    public static ReadOnlySpan<byte> RegionName(int index) => RegionNames[index];

    /// <summary>The category of <paramref name="row"/>, 0 to <see cref="Categories"/> - 1.</summary>
    public static int CategoryOf(long row) => (int)(RecordData.Mix(Seed ^ (ulong)row) % Categories);

    /// <summary>The region of <paramref name="row"/>, 0 to <see cref="Regions"/> - 1.</summary>
    public static int RegionOf(long row) => (int)(RecordData.Mix((Seed + 1) ^ (ulong)row) % Regions);

    /// <summary>The amount of <paramref name="row"/> in hundredths (from -50,000.00 to 149,999.99), or null.</summary>
    public static long? AmountOf(long row)
    {
        ulong h = RecordData.Mix((Seed + 2) ^ (ulong)row);
        return (h >> 56) % 100 < 3 ? null : (long)(h % 20_000_000) - 5_000_000;
    }

    /// <summary>
    /// Writes the note of <paramref name="row"/> (whole UTF-8 words, then dots up to a length of 50 to
    /// 300 bytes) to <paramref name="destination"/> (at least <see cref="MaxNoteBytes"/> bytes).
    /// </summary>
    /// <returns>The note's length in bytes, or -1 for a null note.</returns>
    public static int NoteOf(long row, Span<byte> destination)
    {
        ulong h = RecordData.Mix((Seed + 3) ^ (ulong)row);
        if (h % 100 < 4)
        {
            return -1;
        }

        int length = MinNoteBytes + (int)((h >> 8) % (MaxNoteBytes - MinNoteBytes + 1));
        int kind = (int)((h >> 24) % 100);
        string start = kind < 3 ? Starts[0] : kind < 6 ? Starts[1] : kind < 10 ? Starts[2] : Starts[3 + (kind % (Starts.Length - 3))];
        int used = Encoding.UTF8.GetBytes(start, destination);
        while (true)
        {
            h = RecordData.Mix(h);
            byte[] word = Words[(int)(h % (ulong)Words.Length)];
            if (used + word.Length + 1 > length)
            {
                break;
            }

            word.CopyTo(destination[used..]);
            used += word.Length;
            destination[used++] = (byte)' ';
        }

        destination[used..length].Fill((byte)'.');
        return length;
    }

    /// <summary>
    /// Makes the table of <paramref name="rows"/> rows in native columns, writes it to a Parquet file
    /// compressed with <paramref name="codec"/>, frees the columns, and returns the right results.
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="rows"/> is less than 1.</exception>
    /// <exception cref="OutOfMemoryException">The columns do not fit.</exception>
    /// <exception cref="IOException">The file cannot be written.</exception>
    /// <exception cref="ParquetException">ParquetSharp cannot write the file.</exception>
    public static StringsReference Write(string path, long rows, Compression codec)
    {
        ArgumentNullException.ThrowIfNull(path);
        ArgumentOutOfRangeException.ThrowIfLessThan(rows, 1);
        var builder = new StringsTableBuilder(rows);
        try
        {
            Span<byte> note = stackalloc byte[MaxNoteBytes];
            for (long row = 0; row < rows; row++)
            {
                builder.Add(row, note);
            }

            builder.Write(path, codec);
            return builder.Reference();
        }
        finally
        {
            builder.Dispose();
        }
    }

    private static byte[] NameOf(string kind, int index)
    {
        // Unique by the number; the letters after it bring the length to 8-40 bytes.
        ulong h = RecordData.Mix((ulong)index * 7919 + (ulong)kind.Length);
        var name = new StringBuilder(kind).Append('-').Append(index).Append('-');
        int length = Math.Max(name.Length + 1, 8 + (int)(h % 33));
        while (name.Length < length)
        {
            h = RecordData.Mix(h);
            name.Append((char)('a' + (int)(h % 26)));
        }

        return Encoding.UTF8.GetBytes(name.ToString());
    }
}
