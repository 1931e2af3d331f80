using ParquetSharp;

namespace jemalloc.Parquet.Tests;

/// <summary>Mistakes through the public API raise the conventional exception naming what was wrong.</summary>
public sealed class ApiErrorTests : IDisposable
{
    private readonly TempFolder _folder = new();

    public void Dispose() => _folder.Dispose();

    private string WriteSample()
    {
        string path = _folder.File("sample.parquet");
        using var ints = new HugeArray<int>(100, 7);
        using var unsigned = new HugeArray<uint>(100, 7u);
        using var doubles = new HugeArray<double>(100, 1.5);
        new NativeParquetWriter().Add("ints", ints).Add("unsigned", unsigned).Add("doubles", doubles).Write(path);
        return path;
    }

    [Fact]
    public void Reading_a_missing_column_or_file_throws()
    {
        using var reader = new NativeParquetReader(WriteSample());
        var missing = Assert.Throws<ArgumentException>(() => reader.ReadColumn<int>("nope"));
        Assert.Equal("column", missing.ParamName);
        Assert.Contains("'nope'", missing.Message, StringComparison.Ordinal);
        Assert.Throws<ArgumentNullException>(() => reader.ReadColumn<int>(null!));
        Assert.Throws<ArgumentOutOfRangeException>(() => reader.GetColumnName(3));
        Assert.Throws<FileNotFoundException>(() => new NativeParquetReader(_folder.File("absent.parquet")));
        Assert.Throws<ArgumentException>(() => new NativeParquetReader(""));
    }

    [Fact]
    public void Reading_a_column_as_a_type_that_does_not_hold_its_values_throws()
    {
        using var reader = new NativeParquetReader(WriteSample());
        Assert.Equal("column", Assert.Throws<ArgumentException>(() => reader.ReadColumn<long>("ints")).ParamName);
        Assert.Throws<ArgumentException>(() => reader.ReadColumn<float>("doubles"));
        // UINT_32 is not reinterpreted as int, nor INT_32 as uint.
        Assert.Throws<ArgumentException>(() => reader.ReadColumn<int>("unsigned"));
        Assert.Throws<ArgumentException>(() => reader.ReadColumn<uint>("ints"));
        Assert.Throws<ArgumentException>(() => reader.ReadNullableColumn<short>("ints"));
        Assert.Throws<NotSupportedException>(() => reader.ReadColumn<Guid>("ints"));
        using HugeArray<uint> fine = reader.ReadColumn<uint>("unsigned");
        Assert.Equal(7u, fine[99]);
    }

    [Fact]
    public void A_disposed_reader_throws_and_disposing_twice_does_nothing()
    {
        var reader = new NativeParquetReader(WriteSample());
        reader.Dispose();
        reader.Dispose();
        Assert.Throws<ObjectDisposedException>(() => reader.ReadColumn<int>("ints"));
        Assert.Throws<ObjectDisposedException>(() => reader.RowCount);
    }

    [Fact]
    public void A_file_that_is_not_Parquet_throws_InvalidDataException_naming_it_around_ParquetSharp_s_exception()
    {
        string path = _folder.File("not.parquet");
        File.WriteAllText(path, "this is not a parquet file at all");
        var error = Assert.Throws<InvalidDataException>(() => new NativeParquetReader(path));
        Assert.Contains(path, error.Message, StringComparison.Ordinal);
        Assert.IsType<ParquetException>(error.InnerException);
    }

    [Fact]
    public void Adding_bad_columns_throws()
    {
        using var a = new HugeArray<int>(10);
        using var b = new HugeArray<int>(11);
        using var shortBitmap = new HugeArray<byte>(1);
        var writer = new NativeParquetWriter().Add("a", a);
        Assert.Equal("name", Assert.Throws<ArgumentException>(() => writer.Add("a", a)).ParamName);
        Assert.Contains("11", Assert.Throws<ArgumentException>(() => writer.Add("b", b)).Message, StringComparison.Ordinal);
        Assert.Equal("validity", Assert.Throws<ArgumentException>(() => writer.Add("c", a, shortBitmap)).ParamName);
        Assert.Throws<ArgumentException>(() => writer.Add("", a));
        Assert.Throws<ArgumentNullException>(() => writer.Add<int>("d", (HugeArray<int>)null!));
        using var guids = new HugeArray<Guid>(10);
        Assert.Throws<NotSupportedException>(() => writer.Add("e", guids));
        Assert.Equal(1, writer.ColumnCount);
        Assert.Throws<ArgumentOutOfRangeException>(() => writer.RowGroupSize = 0);
        Assert.Throws<ArgumentOutOfRangeException>(() => writer.Compression = Compression.Lzo);
        Assert.Throws<InvalidOperationException>(() => new NativeParquetWriter().Write(_folder.File("empty.parquet")));
    }

    [Fact]
    public void Writing_a_column_disposed_after_it_was_added_throws_and_leaves_no_file()
    {
        string path = _folder.File("disposed.parquet");
        var a = new HugeArray<int>(10);
        var writer = new NativeParquetWriter().Add("a", a);
        a.Dispose();
        Assert.Throws<ObjectDisposedException>(() => writer.Write(path));
        Assert.False(File.Exists(path));
    }

    [Fact]
    public void Writing_strings_of_a_reset_store_throws_and_deletes_the_partial_file()
    {
        string path = _folder.File("reset.parquet");
        using var ids = new HugeArray<int>(3);
        using var text = new HugeArray<StoredUtf8String>(3);
        using var store = new Utf8StringStore();
        text[0] = store.Add("a");
        text[1] = store.Add("b");
        store.Reset();
        var writer = new NativeParquetWriter().Add("ids", ids).AddStrings("text", text);
        Assert.Throws<ObjectDisposedException>(() => writer.Write(path));
        Assert.False(File.Exists(path));
    }

    [Fact]
    public void A_write_releases_every_column_it_held()
    {
        using var a = new HugeArray<int>(10);
        new NativeParquetWriter().Add("a", a).Write(_folder.File("held.parquet"));
        Assert.Equal(0, a.AcquireCount);
        Assert.Equal(0, a.Handle.LeaseCount);
    }

    [Fact]
    public void A_nullable_column_checks_its_bitmap_and_row()
    {
        var values = new HugeArray<int>(20);
        var bitmap = new HugeArray<byte>(2);
        Assert.Equal("validity", Assert.Throws<ArgumentException>(() => new NullableColumn<int>(values, bitmap)).ParamName);
        bitmap.Dispose();
        bitmap = new HugeArray<byte>(3);
        bitmap[0] = 0b1010_0101;
        bitmap[2] = 0xFF; // bits past row 19 are ignored
        using var column = new NullableColumn<int>(values, bitmap);
        Assert.Equal(20 - 4 - 4, column.NullCount);
        Assert.True(column.IsNull(1));
        Assert.False(column.IsNull(0));
        Assert.Throws<ArgumentOutOfRangeException>(() => column.IsNull(20));
        Assert.Throws<ArgumentOutOfRangeException>(() => column.IsNull(-1));
    }

    [Fact]
    public void A_refused_dispose_of_a_nullable_column_frees_neither_array()
    {
        var values = new HugeArray<int>(16, 4);
        var bitmap = new HugeArray<byte>(2, (byte)0xFF);
        var column = new NullableColumn<int>(values, bitmap);
        MemoryHold hold = bitmap.Hold();
        var error = Assert.Throws<InvalidOperationException>(column.Dispose);
        Assert.Contains("validity bitmap", error.Message, StringComparison.Ordinal);
        Assert.True(values.IsValid);
        Assert.True(bitmap.IsValid);
        Assert.Equal(4, column.Values[15]);

        hold.Dispose();
        column.Dispose();
        column.Dispose();
        Assert.False(values.IsValid);
        Assert.False(bitmap.IsValid);
    }
}
