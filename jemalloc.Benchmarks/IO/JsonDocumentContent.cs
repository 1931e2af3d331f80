using System.Text.Json;

namespace jemalloc.Benchmarks.IO;

/// <summary>
/// The deterministic JSON document of <c>jembench io --json</c>: one array of records
/// <c>{"id","name","price","quantity","active","category"}</c>, written until the document reaches a
/// target size. The same target always gives the same bytes.
/// </summary>
public static class JsonDocumentContent
{
    private static readonly JsonEncodedText Id = JsonEncodedText.Encode("id");
    private static readonly JsonEncodedText Name = JsonEncodedText.Encode("name");
    private static readonly JsonEncodedText Price = JsonEncodedText.Encode("price");
    private static readonly JsonEncodedText Quantity = JsonEncodedText.Encode("quantity");
    private static readonly JsonEncodedText Active = JsonEncodedText.Encode("active");
    private static readonly JsonEncodedText Category = JsonEncodedText.Encode("category");
    private static readonly JsonEncodedText[] Categories =
        [.. new[] { "books", "garden", "tools", "music", "toys", "kitchen", "sports", "office" }.Select(c => JsonEncodedText.Encode(c))];

    /// <summary>Writes the document of about <paramref name="targetBytes"/> bytes (it ends with the first record that reaches it) and flushes.</summary>
    /// <returns>The number of records written.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="targetBytes"/> is below 1.</exception>
    public static long Write(Utf8JsonWriter writer, long targetBytes)
    {
        ArgumentNullException.ThrowIfNull(writer);
        ArgumentOutOfRangeException.ThrowIfLessThan(targetBytes, 1);
        Span<byte> name = stackalloc byte[32];
        "item-"u8.CopyTo(name);
        writer.WriteStartArray();
        long record = 0;
        while (writer.BytesCommitted + writer.BytesPending < targetBytes)
        {
            writer.WriteStartObject();
            writer.WriteNumber(Id, record);
            _ = record.TryFormat(name[5..], out int digits, "D8", provider: null);
            writer.WriteString(Name, name[..(5 + digits)]);
            writer.WriteNumber(Price, (record % 100_000) * 0.25);
            writer.WriteNumber(Quantity, (int)(record % 1000));
            writer.WriteBoolean(Active, record % 3 == 0);
            writer.WriteString(Category, Categories[record % Categories.Length]);
            writer.WriteEndObject();
            record++;
        }

        writer.WriteEndArray();
        writer.Flush();
        return record;
    }

    /// <summary>The length and SHA-256 (hex) of the document for <paramref name="targetBytes"/>, written into nothing but the hash.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="targetBytes"/> is below 1.</exception>
    public static (long Length, string Sha256) Reference(long targetBytes)
    {
        using var hashing = new HashingBufferWriter();
        using (var writer = new Utf8JsonWriter(hashing))
        {
            _ = Write(writer, targetBytes);
        }

        return (hashing.Length, hashing.HashHex());
    }
}
