using Apache.Arrow;
using Apache.Arrow.Ipc;
using Apache.Arrow.Types;

namespace jemalloc.Arrow.Tests;

/// <summary>
/// Big-endian Arrow IPC (as a big-endian machine's Arrow writes it: the schema says Big and every
/// value's bytes are reversed) reads as the same numbers, never as the bytes are. Arrow for
/// JavaScript cannot write it, so the writer's test switch does.
/// </summary>
[Collection(LedgerBalancedAlone.Name)]
public sealed class IpcByteOrderTests
{
    private const long Rows = 3001;

    [Theory]
    [InlineData(ArrowIpcFormat.File)]
    [InlineData(ArrowIpcFormat.Stream)]
    public void Big_endian_IPC_of_every_fixed_width_type_reads_as_the_same_values(ArrowIpcFormat format)
    {
        using var i8 = Fill<sbyte>(IpcExpected.I8);
        using var u8 = Fill<byte>(IpcExpected.U8);
        using var i16 = Fill<short>(IpcExpected.I16);
        using var u16 = Fill<ushort>(IpcExpected.U16);
        using var i32 = Fill<int>(IpcExpected.I32);
        using var u32 = Fill<uint>(IpcExpected.U32);
        using var i64 = Fill<long>(IpcExpected.I64);
        using var u64 = Fill<ulong>(IpcExpected.U64);
        using var f16 = Fill<Half>(IpcExpected.F16);
        using var f32 = Fill<float>(IpcExpected.F32);
        using var f64 = Fill<double>(IpcExpected.F64);
        using var b = Fill<bool>(IpcExpected.B);
        using var d32 = Fill<int>(IpcExpected.D32);
        using var d64 = Fill<long>(IpcExpected.D64);
        using var ts = Fill<long>(IpcExpected.Ts);
        using var t32 = Fill<int>(IpcExpected.T32);
        using var t64 = Fill<long>(IpcExpected.T64);
        using var dur = Fill<long>(IpcExpected.Dur);
        using var valid = new HugeArray<byte>((Rows + 7) / 8);
        for (long r = 0; r < Rows; r++)
        {
            if (!IpcExpected.NullEvery5(r))
            {
                valid[r >> 3] |= (byte)(1 << (int)(r & 7));
            }
        }

        var stream = new MemoryStream();
        new ArrowIpcWriter { BatchSize = 1000, BigEndian = true }
            .Add("i8", i8).Add("u8", u8).Add("i16", i16).Add("u16", u16).Add("i32", i32).Add("u32", u32)
            .Add("i64", i64, valid).Add("u64", u64).Add("f16", f16).Add("f32", f32).Add("f64", f64).Add("b", b)
            .AddDate32("d32", d32).AddDate64("d64", d64).AddTimestamp("ts", ts, TimeUnit.Nanosecond)
            .AddTime("t32", t32, TimeUnit.Millisecond).AddTime("t64", t64, TimeUnit.Nanosecond).AddDuration("dur", dur, TimeUnit.Second)
            .Write(stream, format);
        stream.Position = 0;

        long live = AllocationLedger.LiveCount;
        using (var reader = new ArrowIpcReader(stream, format))
        {
            Assert.True(reader.IsBigEndian);
            Assert.Equal(4, reader.BatchCount);
            Same(reader, "i8", i8);
            Same(reader, "u8", u8);
            Same(reader, "i16", i16);
            Same(reader, "u16", u16);
            Same(reader, "i32", i32);
            Same(reader, "u32", u32);
            Same(reader, "u64", u64);
            Same(reader, "f16", f16);
            Same(reader, "f32", f32);
            Same(reader, "f64", f64);
            Same(reader, "b", b);
            Same(reader, "d32", d32);
            Same(reader, "d64", d64);
            Same(reader, "ts", ts);
            Same(reader, "t32", t32);
            Same(reader, "t64", t64);
            Same(reader, "dur", dur);
            using HugeArray<long> nullable = reader.ReadColumn<long>("i64", AllocationOptions.Default, out HugeArray<byte> bits);
            using (bits)
            {
                for (long r = 0; r < Rows; r++)
                {
                    Assert.Equal(!IpcExpected.NullEvery5(r), IpcExpected.IsSet(bits, r));
                    Assert.Equal(i64[r], nullable[r]);
                }
            }
        }

        Assert.Equal(live, AllocationLedger.LiveCount);
    }

    [Fact]
    public async Task The_big_endian_bytes_are_reversed_values_which_Apache_Arrow_for_NET_takes_as_they_are()
    {
        // What the reader guards against: the sum of an int64 column comes out wrong, with no error.
        using var values = Fill<long>(IpcExpected.I64);
        long expected = 0;
        for (long r = 0; r < Rows; r++)
        {
            expected += values[r];
        }

        var stream = new MemoryStream();
        new ArrowIpcWriter { BigEndian = true }.Add("v", values).Write(stream, ArrowIpcFormat.Stream);
        stream.Position = 0;
        long theirs = 0;
        using (var other = new ArrowStreamReader(stream, leaveOpen: true))
        {
            using RecordBatch batch = (await other.ReadNextRecordBatchAsync())!;
            var column = (Int64Array)batch.Column(0);
            for (int i = 0; i < batch.Length; i++)
            {
                theirs += column.GetValue(i)!.Value;
            }
        }

        stream.Position = 0;
        using var reader = new ArrowIpcReader(stream, leaveOpen: true);
        using HugeArray<long> ours = reader.ReadColumn<long>("v");
        Assert.NotEqual(expected, theirs);
        Assert.Equal(expected, ours.VectorSum());
    }

    private static HugeArray<T> Fill<T>(Func<long, T> value)
        where T : unmanaged, IEquatable<T>
    {
        var array = new HugeArray<T>(Rows);
        for (long r = 0; r < Rows; r++)
        {
            array[r] = value(r);
        }

        return array;
    }

    private static void Same<T>(ArrowIpcReader reader, string column, HugeArray<T> expected)
        where T : unmanaged, IEquatable<T>
    {
        using HugeArray<T> read = reader.ReadColumn<T>(column);
        for (long r = 0; r < Rows; r++)
        {
            if (!read[r].Equals(expected[r]))
            {
                Assert.Fail($"Column {column}, row {r}: {read[r]}, expected {expected[r]}.");
            }
        }
    }
}
