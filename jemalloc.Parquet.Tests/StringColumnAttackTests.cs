#pragma warning disable xUnit1031 // the races block on their threads on purpose
using System.Buffers.Binary;
using ParquetSharp;

namespace jemalloc.Parquet.Tests;

/// <summary>Hostile use of NativeParquetReader.ReadStringColumn and NativeParquetWriter.Add(string, NativeStringColumn), forged files included.</summary>
[Collection(LedgerBalancedAlone.Name)]
public sealed class StringColumnAttackTests : IDisposable
{
    private readonly TempFolder _folder = new();
    private readonly long _live = AllocationLedger.LiveCount;

    public void Dispose()
    {
        _folder.Dispose();
        Assert.Equal(_live, AllocationLedger.LiveCount);
    }

    private static NativeStringColumn Build(IEnumerable<string?> values)
    {
        using var builder = new NativeStringColumnBuilder();
        foreach (string? value in values)
        {
            builder.Append(value);
        }

        return builder.Build();
    }

    private static string Marker(int i) => $"MARK{i:D6}-value";

    // A file of one optional string column, uncompressed, whose values are Marker(i) (every 10th null).
    private string WriteMarkers(string name, int rows)
    {
        string path = _folder.File(name);
        using NativeStringColumn column = Build(Enumerable.Range(0, rows).Select(i => i % 10 == 9 ? null : Marker(i)));
        new NativeParquetWriter { Compression = Compression.Uncompressed }.Add("s", column).Write(path);
        return path;
    }

    // Rewrites the 4-byte PLAIN length prefix of value Marker(i) (in the dictionary or data page).
    private static void ForgeLength(string path, int i, int length)
    {
        byte[] file = File.ReadAllBytes(path);
        byte[] pattern = new byte[4 + Marker(i).Length];
        BinaryPrimitives.WriteInt32LittleEndian(pattern, Marker(i).Length);
        System.Text.Encoding.ASCII.GetBytes(Marker(i)).CopyTo(pattern, 4);
        int at = file.AsSpan().IndexOf(pattern);
        Assert.True(at >= 0, "the value's PLAIN bytes were not found");
        BinaryPrimitives.WriteInt32LittleEndian(file.AsSpan(at), length);
        File.WriteAllBytes(path, file);
    }

    private static Exception? Read(string path)
    {
        return Record.Exception(() =>
        {
            using var reader = new NativeParquetReader(path);
            using NativeStringColumn column = reader.ReadStringColumn("s");
            for (long row = 0; row < column.Length; row++)
            {
                _ = column.GetBytes(row);
            }
        });
    }

    [Theory]
    [InlineData(int.MaxValue)]
    [InlineData(0x7FFF_FF00)]
    [InlineData(1 << 20)]
    [InlineData(-1)]
    [InlineData(int.MinValue)]
    [InlineData(-16)]
    public void StringColumnAttack_forged_byte_array_lengths_give_an_exception_and_free_everything(int length)
    {
        foreach (int victim in new[] { 0, 500, 998 })
        {
            string path = WriteMarkers($"forged-{length}-{victim}.parquet", 1000);
            ForgeLength(path, victim, length);
            Exception? e = Read(path);
            Assert.True(e is ParquetException or InvalidDataException, $"value {victim} of length {length}: {e?.ToString() ?? "read without an exception"}");
        }
    }

    [Theory]
    [InlineData(0)]
    [InlineData(3)]
    public void StringColumnAttack_forged_shorter_lengths_read_as_damaged_or_throw_without_crashing(int length)
    {
        string path = WriteMarkers($"short-{length}.parquet", 1000);
        ForgeLength(path, 500, length);
        Exception? e = Read(path);
        Assert.True(e is null or ParquetException or InvalidDataException, e?.ToString());
    }

    [Theory]
    [InlineData(1000, 999)]
    [InlineData(1000, 1001)]
    public void StringColumnAttack_footer_row_counts_that_disagree_with_the_pages_are_InvalidData(long rows, long declared)
    {
        string path = WriteMarkers($"rows-{declared}.parquet", (int)rows);
        Assert.True(ParquetFooter.RewriteCounts(path, rows, declared) > 0);
        Exception? e = Read(path);
        Assert.True(e is InvalidDataException or ParquetException, e?.ToString() ?? "read without an exception");
    }

    [Fact]
    public void StringColumnAttack_offsets_changed_between_Add_and_Write_are_InvalidData_and_leave_no_file()
    {
        string path = _folder.File("changed.parquet");
        using NativeStringColumn column = Build(["abc", "de", null, "f"]);
        var writer = new NativeParquetWriter().Add("s", column);
        column.Offsets[2] = 1L << 40;
        Assert.Throws<InvalidDataException>(() => writer.Write(path));
        Assert.False(File.Exists(path));
        column.Offsets[2] = 5;
        writer.Write(path);
        using var reader = new NativeParquetReader(path);
        using NativeStringColumn back = reader.ReadStringColumn("s");
        Assert.Equal(["abc", "de", null, "f"], Enumerable.Range(0, 4).Select(i => back.GetString(i)));
    }

    [Fact]
    public void StringColumnAttack_offsets_of_null_rows_may_be_anything_and_the_file_still_holds_the_values()
    {
        string path = _folder.File("null-offsets.parquet");
        using NativeStringColumn column = Build(["abc", null, "de"]);
        // Row 1 is null; its end offset (the start of row 2) is left as it is, but nothing else may be read through it.
        column.Offsets[1] = 3;
        new NativeParquetWriter().Add("s", column).Write(path);
        using var reader = new NativeParquetReader(path);
        using NativeStringColumn back = reader.ReadStringColumn("s");
        Assert.Equal("abc", back.GetString(0));
        Assert.Null(back.GetString(1));
        Assert.Equal("de", back.GetString(2));
    }

    [Fact]
    public void StringColumnAttack_a_column_disposed_between_Add_and_Write_is_ObjectDisposed()
    {
        string path = _folder.File("disposed.parquet");
        NativeStringColumn column = Build(["abc"]);
        var writer = new NativeParquetWriter().Add("s", column);
        column.Dispose();
        Assert.Throws<ObjectDisposedException>(() => writer.Write(path));
        Assert.False(File.Exists(path));
    }

    [Fact]
    public void StringColumnAttack_the_same_column_added_twice_and_a_zero_row_column_write_and_read()
    {
        string path = _folder.File("twice.parquet");
        using NativeStringColumn column = Build(["x", null]);
        new NativeParquetWriter().Add("a", column).Add("b", column).Write(path);
        using (var reader = new NativeParquetReader(path))
        {
            using NativeStringColumn a = reader.ReadStringColumn("a");
            using NativeStringColumn b = reader.ReadStringColumn("b");
            Assert.Equal("x", b.GetString(0));
            Assert.Null(a.GetString(1));
        }

        string empty = _folder.File("empty.parquet");
        using NativeStringColumn none = Build([]);
        new NativeParquetWriter().Add("s", none).Write(empty);
        using var emptyReader = new NativeParquetReader(empty);
        using NativeStringColumn back = emptyReader.ReadStringColumn("s");
        Assert.Equal(0, back.Length);
    }

    [Fact]
    public void StringColumnAttack_offset_changes_racing_a_write_give_InvalidData_or_a_file_of_good_values()
    {
        string path = _folder.File("race.parquet");
        using NativeStringColumn column = Build(Enumerable.Range(0, 200_000).Select(i => "value-" + i));
        long good = column.Offsets[100_000];
        using var stop = new CancellationTokenSource();
        var attacker = new Thread(() =>
        {
            int k = 0;
            while (!stop.IsCancellationRequested)
            {
                column.Offsets[100_000] = (k++ & 1) == 0 ? 1L << 50 : good;
            }

            column.Offsets[100_000] = good;
        });
        attacker.Start();
        Exception? failure = null;
        int written = 0;
        try
        {
            for (int i = 0; i < 4; i++)
            {
                try
                {
                    new NativeParquetWriter().Add("s", column).Write(path + written);
                    written++;
                }
                catch (InvalidDataException)
                {
                }
            }
        }
        catch (Exception e)
        {
            failure = e;
        }
        finally
        {
            stop.Cancel();
            attacker.Join();
        }

        Assert.Null(failure);
        if (written > 0)
        {
            using var reader = new NativeParquetReader(path + "0");
            using NativeStringColumn back = reader.ReadStringColumn("s");
            Assert.Equal("value-99999", back.GetString(99_999));
        }
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void StringColumnAttack_a_footer_that_flips_optional_and_required_throws_or_reads_damaged_without_crashing(bool nullable)
    {
        // Definition levels against values: the footer's repetition of column "s" (OPTIONAL 1, REQUIRED 0, zigzag 2 / 0) flipped.
        string path = _folder.File($"flip-{nullable}.parquet");
        using NativeStringColumn column = Build(Enumerable.Range(0, 1000).Select(i => nullable && i % 10 == 9 ? null : Marker(i)));
        new NativeParquetWriter { Compression = Compression.Uncompressed }.Add("s", column).Write(path);
        byte[] file = File.ReadAllBytes(path);
        int footerLength = BinaryPrimitives.ReadInt32LittleEndian(file.AsSpan(file.Length - 8));
        int footer = file.Length - 8 - footerLength;
        byte[] pattern = [nullable ? (byte)0x02 : (byte)0x00, 0x18, 0x01, (byte)'s'];
        int at = file.AsSpan(footer).IndexOf(pattern);
        Assert.True(at > 0 && (file[footer + at - 1] & 0x0F) == 5, "the repetition field of 's' was not found");
        file[footer + at] = nullable ? (byte)0x00 : (byte)0x02;
        File.WriteAllBytes(path, file);
        Exception? e = Read(path);
        Assert.True(e is null or ParquetException or InvalidDataException, e?.ToString());
    }

    [Fact]
    public void StringColumnAttack_dispose_racing_a_write_is_refused_or_wins_cleanly()
    {
        for (int round = 0; round < 5; round++)
        {
            string path = _folder.File($"dispose-race-{round}.parquet");
            NativeStringColumn column = Build(Enumerable.Range(0, 100_000).Select(i => "value-" + i));
            Exception? writeFailure = null;
            var writerThread = new Thread(() => writeFailure = Record.Exception(() => new NativeParquetWriter().Add("s", column).Write(path)));
            writerThread.Start();
            bool disposed = false;
            int refused = 0;
            while (!disposed)
            {
                try
                {
                    column.Dispose();
                    disposed = true;
                }
                catch (InvalidOperationException)
                {
                    refused++;
                }
            }

            writerThread.Join();
            Assert.True(writeFailure is null or ObjectDisposedException, writeFailure?.ToString());
            if (writeFailure is null)
            {
                using var reader = new NativeParquetReader(path);
                using NativeStringColumn back = reader.ReadStringColumn("s");
                Assert.Equal("value-99999", back.GetString(99_999));
            }
        }
    }

    [Fact]
    public void StringColumnAttack_a_column_read_into_an_arena_throws_ObjectDisposed_after_a_reset()
    {
        string path = WriteMarkers("arena.parquet", 100);
        using var arena = new JemArena();
        NativeStringColumn column;
        using (var reader = new NativeParquetReader(path))
        {
            column = reader.ReadStringColumn("s", arena.Options);
        }

        Assert.Equal(Marker(0), column.GetString(0));
        arena.Reset();
        Assert.Throws<ObjectDisposedException>(() => column.GetString(0));
        column.Dispose();
    }

    [Fact]
    public void StringColumnAttack_a_non_string_column_is_refused_by_name()
    {
        string path = _folder.File("ints.parquet");
        using var ints = new HugeArray<int>(3);
        new NativeParquetWriter().Add("i", ints).Write(path);
        using var reader = new NativeParquetReader(path);
        var e = Assert.Throws<ArgumentException>(() => reader.ReadStringColumn("i"));
        Assert.Contains("'i'", e.Message);
        Assert.Throws<ArgumentException>(() => reader.ReadStringColumn("nope"));
    }

    [Fact]
    public void StringColumnAttack_a_read_past_an_arenas_budget_throws_and_gives_everything_back()
    {
        string path = WriteMarkers("budget.parquet", 20_000);
        using var arena = new JemArena(budgetBytes: 96 * 1024);
        using var reader = new NativeParquetReader(path);
        Exception? e = Record.Exception(() => reader.ReadStringColumn("s", arena.Options).Dispose());
        Assert.True(e is ArenaBudgetExceededException or OutOfMemoryException, e?.ToString() ?? "read past the budget");
        Assert.Equal(0, arena.UsedBytes);
        arena.Reset();
        // The reader still works after the failure.
        using NativeStringColumn column = reader.ReadStringColumn("s");
        Assert.Equal(Marker(19_998), column.GetString(19_998));
    }
}
