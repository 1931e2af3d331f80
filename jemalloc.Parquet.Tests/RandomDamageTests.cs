using ParquetSharp;

namespace jemalloc.Parquet.Tests;

/// <summary>
/// Hostile review 3: random damage to the pages of optional columns in every encoding a type can have,
/// read without page checksums (a file whose writer gave it none). Whatever the damage, a read either
/// succeeds (a changed value reads as a changed value: nothing can tell it from a real one) or throws an
/// <see cref="InvalidDataException"/>, and leaves nothing allocated. The seeds are fixed, so a failure
/// names its mutation; before the reader checked every batch's value count against its levels, these
/// found NullReferenceExceptions in the fixed-size binary, decimal and FLOAT16 reads.
/// </summary>
// It compares the ledger's process-wide counts, so it runs alone (see LedgerBalanced).
[Collection(LedgerBalancedAlone.Name)]
public sealed class RandomDamageTests : IDisposable
{
    private const int Rows = 3000;
    private const int Mutations = 300;
    private readonly TempFolder _folder = new();

    public static TheoryData<string, Encoding> Columns => new()
    {
        { "long", Encoding.DeltaBinaryPacked },
        { "long", Encoding.RleDictionary },
        { "short", Encoding.DeltaBinaryPacked },
        { "double", Encoding.ByteStreamSplit },
        { "bool", Encoding.Rle },
        { "string", Encoding.DeltaLengthByteArray },
        { "string", Encoding.DeltaByteArray },
        { "string", Encoding.RleDictionary },
        { "uuid", Encoding.DeltaByteArray },
        { "half", Encoding.ByteStreamSplit },
        { "decimal", Encoding.DeltaByteArray },
        { "decimal", Encoding.Plain },
    };

    public void Dispose() => _folder.Dispose();

    [Theory]
    [MemberData(nameof(Columns))]
    public void Damaged_pages_read_or_throw_InvalidDataException_and_leave_nothing_allocated(string kind, Encoding encoding)
    {
        string clean = _folder.File($"{kind}-{encoding}.parquet");
        Write(clean, kind, encoding);
        Assert.Equal(Rows / 7 + 1, Read(clean, kind));

        byte[] original = File.ReadAllBytes(clean);
        int pagesEnd = original.Length - 8 - BitConverter.ToInt32(original, original.Length - 8);
        string damaged = _folder.File("damaged.parquet");
        var random = new Random((kind.Length * 100) + (int)encoding);
        long live = AllocationLedger.LiveCount;
        var outcomes = new List<string>();
        for (int mutation = 0; mutation < Mutations; mutation++)
        {
            byte[] file = (byte[])original.Clone();
            for (int flips = random.Next(1, 5); flips > 0; flips--)
            {
                int at = random.Next(4, pagesEnd);
                file[at] = random.Next(3) == 0 ? (byte)random.Next(256) : (byte)(file[at] ^ (1 << random.Next(8)));
            }

            File.WriteAllBytes(damaged, file);
            try
            {
                _ = Read(damaged, kind);
            }
            catch (InvalidDataException)
            {
            }
            catch (Exception e)
            {
                outcomes.Add($"mutation {mutation}: {e.GetType().Name}: {e.Message}");
            }
        }

        Assert.Empty(outcomes);
        Assert.Equal(live, AllocationLedger.LiveCount);
    }

    // One optional column, every seventh row null, uncompressed (so the damage lands in the encodings, not
    // in a codec's frames), in small pages so that a file has many page headers.
    private static void Write(string path, string kind, Encoding encoding)
    {
        var values = new Random(1);
        switch (kind)
        {
            case "long": Write<long?>(path, new Column<long?>("v"), encoding, i => i % 7 == 0 ? null : values.Next() * 13L); break;
            case "short": Write<short?>(path, new Column<short?>("v"), encoding, i => i % 7 == 0 ? null : (short)values.Next()); break;
            case "double": Write<double?>(path, new Column<double?>("v"), encoding, i => i % 7 == 0 ? null : values.NextDouble()); break;
            case "bool": Write<bool?>(path, new Column<bool?>("v"), encoding, i => i % 7 == 0 ? null : values.Next() % 2 == 0); break;
            case "string": Write<string?>(path, new Column<string>("v", LogicalType.String()), encoding, i => i % 7 == 0 ? null : $"s{values.Next(0, 500)}"); break;
            case "uuid": Write<Guid?>(path, new Column<Guid?>("v", LogicalType.Uuid()), encoding, i => i % 7 == 0 ? null : new Guid(values.Next(), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10)); break;
            case "half": Write<Half?>(path, new Column<Half?>("v"), encoding, i => i % 7 == 0 ? null : (Half)values.Next(0, 1000)); break;
            default: Write<decimal?>(path, new Column<decimal?>("v", LogicalType.Decimal(29, 3)), encoding, i => i % 7 == 0 ? null : values.Next() / 1000m); break;
        }
    }

    private static void Write<T>(string path, Column column, Encoding encoding, Func<int, T> value)
    {
        WriterPropertiesBuilder builder = new WriterPropertiesBuilder().Compression(Compression.Uncompressed).DataPagesize(4096);
        using WriterProperties properties = encoding == Encoding.RleDictionary ? builder.Build() : builder.DisableDictionary().Encoding(encoding).Build();
        using var writer = new ParquetFileWriter(path, [column], properties);
        using RowGroupWriter group = writer.AppendRowGroup();
        using LogicalColumnWriter<T> logical = group.NextColumn().LogicalWriter<T>();
        logical.WriteBatch([.. Enumerable.Range(0, Rows).Select(value)]);
        writer.Close();
    }

    private static long NullsOf<T>(NativeParquetReader reader)
        where T : unmanaged, IEquatable<T>
    {
        using NullableColumn<T> column = reader.ReadNullableColumn<T>("v");
        return column.NullCount;
    }

    // Reads the column the way its type is read and returns its null count.
    private static long Read(string path, string kind)
    {
        using var reader = new NativeParquetReader(path, new ParquetReadOptions { VerifyPageChecksums = false });
        switch (kind)
        {
            case "long":
                return NullsOf<long>(reader);

            case "short":
                return NullsOf<short>(reader);

            case "double":
                return NullsOf<double>(reader);

            case "bool":
                return NullsOf<bool>(reader);

            case "string":
            {
                using NativeStringColumn strings = reader.ReadStringColumn("v");
                using NativeDictionaryColumn dictionary = reader.ReadDictionaryColumn("v");
                Assert.Equal(strings.NullCount, dictionary.NullCount);
                return strings.NullCount;
            }

            case "uuid":
            {
                using FixedSizeBinaryColumn column = reader.ReadFixedSizeBinaryColumn("v");
                return column.NullCount;
            }

            case "half":
                return NullsOf<Half>(reader);

            default:
            {
                using DecimalColumn column = reader.ReadDecimalColumn("v");
                return column.NullCount;
            }
        }
    }
}
