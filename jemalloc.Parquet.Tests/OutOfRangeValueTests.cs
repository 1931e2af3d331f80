using ParquetSharp;
using ParquetSharp.Schema;

namespace jemalloc.Parquet.Tests;

/// <summary>
/// A malformed file whose 8- or 16-bit integer column holds INT32 values its logical type cannot
/// (1000 in an INT(8)) is an <see cref="InvalidDataException"/> naming the column, for every element
/// type the column may be read as: never a value wrapped into the element, nor widened as it was.
/// </summary>
public sealed class OutOfRangeValueTests : IDisposable
{
    private readonly TempFolder _folder = new();

    public void Dispose() => _folder.Dispose();

    [Theory]
    [InlineData(8, true, 1000)]
    [InlineData(8, true, -129)]
    [InlineData(8, false, 300)]
    [InlineData(8, false, -1)]
    [InlineData(16, true, 40_000)]
    [InlineData(16, false, 70_000)]
    [InlineData(16, false, -1)]
    public void Every_element_type_refuses_a_value_outside_the_columns_logical_type(int bitWidth, bool isSigned, int outside)
    {
        foreach (bool nullable in new[] { false, true })
        {
            string path = WriteRaw(bitWidth, isSigned, nullable, [1, outside, 2]);
            using var reader = new NativeParquetReader(path);
            foreach (Func<NativeParquetReader, IDisposable> read in ReadsOf(bitWidth, isSigned))
            {
                var error = Assert.Throws<InvalidDataException>(() => read(reader).Dispose());
                Assert.Contains("'x'", error.Message, StringComparison.Ordinal);
                Assert.Contains(outside.ToString(System.Globalization.CultureInfo.InvariantCulture), error.Message, StringComparison.Ordinal);
            }
        }
    }

    [Theory]
    [InlineData(8, true, -128, 127)]
    [InlineData(8, false, 0, 255)]
    [InlineData(16, true, -32768, 32767)]
    [InlineData(16, false, 0, 65535)]
    public void The_ends_of_each_range_read_as_they_are(int bitWidth, bool isSigned, int min, int max)
    {
        using var reader = new NativeParquetReader(WriteRaw(bitWidth, isSigned, nullable: true, [min, max]));
        using NullableColumn<int> wide = reader.ReadNullableColumn<int>("x");
        Assert.Equal(min, wide.Values[0]);
        Assert.Equal(max, wide.Values[1]);
    }

    private static IEnumerable<Func<NativeParquetReader, IDisposable>> ReadsOf(int bitWidth, bool isSigned)
    {
        yield return r => r.ReadColumn<int>("x");
        yield return r => r.ReadNullableColumn<int>("x");
        if (!isSigned)
        {
            yield return r => r.ReadColumn<uint>("x");
        }

        yield return (bitWidth, isSigned) switch
        {
            (8, true) => r => r.ReadColumn<sbyte>("x"),
            (8, false) => r => r.ReadColumn<byte>("x"),
            (16, true) => r => r.ReadColumn<short>("x"),
            _ => r => r.ReadNullableColumn<ushort>("x"),
        };
    }

    // A file as a careless or hostile writer makes it: ParquetSharp's low-level writer does not check
    // the values against the logical type.
    private string WriteRaw(int bitWidth, bool isSigned, bool nullable, int[] values)
    {
        string path = _folder.File($"int{bitWidth}-{isSigned}-{nullable}-{values[1]}.parquet");
        using var logical = LogicalType.Int(bitWidth, isSigned);
        using var node = new PrimitiveNode("x", nullable ? Repetition.Optional : Repetition.Required, logical, PhysicalType.Int32);
        using var schema = new GroupNode("schema", Repetition.Required, [node]);
        using var builder = new WriterPropertiesBuilder();
        using WriterProperties properties = builder.Build();
        using (var file = new ParquetFileWriter(path, schema, properties))
        {
            using (RowGroupWriter group = file.AppendRowGroup())
            using (var column = (ColumnWriter<int>)group.NextColumn())
            {
                short[]? levels = nullable ? [.. values.Select(_ => (short)1)] : null;
                column.WriteBatch(values.Length, levels, null, values);
            }

            file.Close();
        }

        return path;
    }
}
