using System.Globalization;
using Apache.Arrow.Types;

namespace jemalloc.Arrow.Tests;

/// <summary>
/// <see cref="ArrowIpcReader"/> and <see cref="ArrowIpcWriter"/> against Apache Arrow for JavaScript:
/// IPC that Node wrote (every fixed-width type, nulls, batches of odd lengths) read value by value,
/// and IPC written from native columns read by Node with the same sums, null counts and types.
/// </summary>
[Collection(LedgerBalancedAlone.Name)]
public sealed class IpcNodeInteropTests : IDisposable
{
    private readonly string _folder = Path.Combine(Path.GetTempPath(), "jemalloc-ipc-tests-" + Guid.NewGuid().ToString("N"));

    public IpcNodeInteropTests() => Directory.CreateDirectory(_folder);

    public void Dispose() => Directory.Delete(_folder, recursive: true);

    [Theory]
    [InlineData("file")]
    [InlineData("stream")]
    public void IPC_Node_wrote_reads_into_native_columns_value_by_value(string format)
    {
        string path = Path.Combine(_folder, $"types.{format}.arrow");
        NodeArrow.Run("write-types", path, format, IpcExpected.BatchLengths);
        long live = AllocationLedger.LiveCount;
        using (var reader = new ArrowIpcReader(path))
        {
            Assert.Equal(format == "file" ? ArrowIpcFormat.File : ArrowIpcFormat.Stream, reader.Format);
            Assert.False(reader.IsBigEndian);
            Assert.Equal(6, reader.BatchCount);
            Assert.Equal(IpcExpected.Rows, reader.RowCount);
            CheckSchema(reader);

            CheckNullable<sbyte>(reader, "i8", IpcExpected.I8, IpcExpected.NullEvery5);
            Check<byte>(reader, "u8", IpcExpected.U8);
            Check<short>(reader, "i16", IpcExpected.I16);
            Check<ushort>(reader, "u16", IpcExpected.U16);
            Check<int>(reader, "i32", IpcExpected.I32);
            Check<uint>(reader, "u32", IpcExpected.U32);
            Check<long>(reader, "i64", IpcExpected.I64);
            Check<ulong>(reader, "u64", IpcExpected.U64);
            Check<Half>(reader, "f16", IpcExpected.F16);
            Check<float>(reader, "f32", IpcExpected.F32);
            CheckNullable<double>(reader, "f64", IpcExpected.F64, IpcExpected.NullEvery5);
            CheckNullable<bool>(reader, "b", IpcExpected.B, IpcExpected.BIsNull);
            Check<int>(reader, "d32", IpcExpected.D32);
            Check<long>(reader, "d64", IpcExpected.D64);
            CheckNullable<long>(reader, "ts", IpcExpected.Ts, IpcExpected.NullEvery5);
            Check<int>(reader, "t32", IpcExpected.T32);
            Check<long>(reader, "t64", IpcExpected.T64);
            Check<long>(reader, "dur", IpcExpected.Dur);

            // A column with nulls is refused without a bitmap; a wrong element type names both types.
            InvalidOperationException nulls = Assert.Throws<InvalidOperationException>(() => reader.ReadColumn<double>("f64"));
            Assert.Contains("'f64' has 1,025 nulls", nulls.Message, StringComparison.Ordinal);
            ArgumentException wrong = Assert.Throws<ArgumentException>(() => reader.ReadColumn<int>("i64"));
            Assert.Contains("Int64", wrong.Message, StringComparison.Ordinal);
            Assert.Contains("Int32", wrong.Message, StringComparison.Ordinal);
            Assert.Throws<ArgumentException>(() => reader.ReadColumn<long>("u64"));
            Assert.Throws<ArgumentException>(() => reader.ReadColumn<long>("nope"));
        }

        Assert.Equal(live, AllocationLedger.LiveCount);
    }

    [Theory]
    [InlineData("file", 1L << 20)]
    [InlineData("stream", 1L << 20)]
    [InlineData("file", 1000)]
    [InlineData("stream", 8)]
    public void Node_reads_IPC_written_from_native_columns_with_the_same_sums_nulls_and_types(string format, long batchSize)
    {
        const long rows = 20_011;
        using var i8 = new HugeArray<sbyte>(rows);
        using var u64 = new SafeArray<ulong>((int)rows);
        using var f16 = new HugeArray<Half>(rows);
        using var f64 = new HugeArray<double>(rows);
        using var f64Valid = new HugeArray<byte>((rows + 7) / 8);
        using var flags = new HugeArray<bool>(rows);
        using var flagsValid = new HugeArray<byte>((rows + 7) / 8);
        using var days = new HugeArray<int>(rows);
        using var micros = new HugeArray<long>(rows);
        using var nanosOfDay = new HugeArray<long>(rows);
        using var millis = new HugeArray<long>(rows);
        long i8Sum = 0, f64Nulls = 0, flagsTrue = 0, flagsNulls = 0, daysSum = 0, nanosSum = 0, millisSum = 0;
        double f16Sum = 0, f64Sum = 0, microsAsMillis = 0;
        System.Numerics.BigInteger u64Sum = 0;
        for (long r = 0; r < rows; r++)
        {
            i8[r] = IpcExpected.I8(r);
            i8Sum += i8[r];
            u64[(int)r] = IpcExpected.U64(r);
            u64Sum += u64[(int)r];
            f16[r] = IpcExpected.F16(r);
            f16Sum += (double)f16[r];
            f64[r] = IpcExpected.F64(r);
            if (r % 9 == 4)
            {
                f64Nulls++;
            }
            else
            {
                f64Valid[r >> 3] |= (byte)(1 << (int)(r & 7));
                f64Sum += f64[r];
            }

            flags[r] = IpcExpected.B(r);
            if (IpcExpected.BIsNull(r))
            {
                flagsNulls++;
            }
            else
            {
                flagsValid[r >> 3] |= (byte)(1 << (int)(r & 7));
                flagsTrue += flags[r] ? 1 : 0;
            }

            days[r] = IpcExpected.D32(r);
            daysSum += days[r] * 86_400_000L;
            micros[r] = IpcExpected.Ts(r);
            microsAsMillis += micros[r] / 1000.0;
            nanosOfDay[r] = IpcExpected.T64(r);
            nanosSum += nanosOfDay[r];
            millis[r] = IpcExpected.Dur(r);
            millisSum += millis[r];
        }

        string path = Path.Combine(_folder, $"native.{format}.{batchSize}.arrow");
        long live = AllocationLedger.LiveCount;
        new ArrowIpcWriter { BatchSize = batchSize }
            .Add("i8", i8)
            .Add("u64", u64)
            .Add("f16", f16)
            .Add("f64", f64, f64Valid)
            .Add("b", flags, flagsValid)
            .AddDate32("d32", days)
            .AddTimestamp("ts", micros, TimeUnit.Microsecond, "Europe/Paris")
            .AddTime("t64", nanosOfDay, TimeUnit.Nanosecond)
            .AddDuration("dur", millis, TimeUnit.Millisecond)
            .Write(path, format == "file" ? ArrowIpcFormat.File : ArrowIpcFormat.Stream);
        Assert.Equal(live, AllocationLedger.LiveCount);

        Dictionary<string, NodeArrow.ColumnSummary> node = NodeArrow.Read(path);
        Assert.Equal(new NodeArrow.ColumnSummary("Int8", rows, 0, Text(i8Sum)), node["i8"]);
        Assert.Equal(new NodeArrow.ColumnSummary("Uint64", rows, 0, u64Sum.ToString(CultureInfo.InvariantCulture)), node["u64"]);
        Assert.Equal(new NodeArrow.ColumnSummary("Float16", rows, 0, Text(f16Sum)), node["f16"]);
        Assert.Equal(new NodeArrow.ColumnSummary("Float64", rows, f64Nulls, Text(f64Sum)), node["f64"]);
        Assert.Equal(new NodeArrow.ColumnSummary("Bool", rows, flagsNulls, Text(flagsTrue)), node["b"]);
        Assert.Equal(new NodeArrow.ColumnSummary("Date32<DAY>", rows, 0, Text(daysSum)), node["d32"]);
        Assert.Equal("Timestamp<MICROSECOND, Europe/Paris>", node["ts"].Type);
        Assert.Equal(microsAsMillis, double.Parse(node["ts"].Sum, CultureInfo.InvariantCulture), 1e-6 * Math.Abs(microsAsMillis));
        Assert.Equal(new NodeArrow.ColumnSummary("Time64<NANOSECOND>", rows, 0, Text(nanosSum)), node["t64"]);
        Assert.Equal(new NodeArrow.ColumnSummary("Duration<MILLISECOND>", rows, 0, Text(millisSum)), node["dur"]);

        // And back through our own reader, batch boundaries and all.
        using var reader = new ArrowIpcReader(path);
        Assert.Equal((rows + batchSize - 1) / batchSize, reader.BatchCount);
        Assert.Equal("ts: Timestamp(Microsecond, Europe/Paris)", reader.Fields[6].ToString());
        using HugeArray<double> back = reader.ReadColumn<double>("f64", AllocationOptions.Default, out HugeArray<byte> backValid);
        using (backValid)
        {
            for (long r = 0; r < rows; r++)
            {
                Assert.Equal(r % 9 != 4, IpcExpected.IsSet(backValid, r));
                Assert.Equal(f64[r], back[r]);
            }
        }
    }

    private static string Text(long value) => value.ToString(CultureInfo.InvariantCulture);

    private static string Text(double value) => value.ToString(CultureInfo.InvariantCulture);

    private static void CheckSchema(ArrowIpcReader reader)
    {
        string[] names = ["i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64", "f16", "f32", "f64", "b", "d32", "d64", "ts", "t32", "t64", "dur"];
        ArrowIpcType[] types =
        [
            ArrowIpcType.Int8, ArrowIpcType.UInt8, ArrowIpcType.Int16, ArrowIpcType.UInt16, ArrowIpcType.Int32, ArrowIpcType.UInt32,
            ArrowIpcType.Int64, ArrowIpcType.UInt64, ArrowIpcType.HalfFloat, ArrowIpcType.Float, ArrowIpcType.Double, ArrowIpcType.Boolean,
            ArrowIpcType.Date32, ArrowIpcType.Date64, ArrowIpcType.Timestamp, ArrowIpcType.Time32, ArrowIpcType.Time64, ArrowIpcType.Duration,
        ];
        Assert.Equal(names, reader.Fields.Select(f => f.Name));
        Assert.Equal(types, reader.Fields.Select(f => f.Type));
        ArrowIpcField ts = reader.Fields[reader.GetColumnIndex("ts")];
        Assert.Equal(TimeUnit.Microsecond, ts.Unit);
        Assert.Equal("UTC", ts.TimeZone);
        Assert.Equal("Timestamp(Microsecond, UTC)", ts.TypeName);
        Assert.Equal(TimeUnit.Millisecond, reader.Fields[reader.GetColumnIndex("t32")].Unit);
        Assert.Equal(TimeUnit.Nanosecond, reader.Fields[reader.GetColumnIndex("t64")].Unit);
        Assert.Equal(TimeUnit.Millisecond, reader.Fields[reader.GetColumnIndex("dur")].Unit);
        Assert.Null(reader.Fields[0].Unit);
        Assert.False(reader.Fields[0].IsDictionaryEncoded);
    }

    private static void Check<T>(ArrowIpcReader reader, string column, Func<long, T> expected)
        where T : unmanaged, IEquatable<T>
    {
        using HugeArray<T> values = reader.ReadColumn<T>(column);
        Assert.Equal(IpcExpected.Rows, values.Length);
        for (long r = 0; r < values.Length; r++)
        {
            if (!values[r].Equals(expected(r)))
            {
                Assert.Fail($"Column {column}, row {r}: {values[r]}, expected {expected(r)}.");
            }
        }
    }

    private static void CheckNullable<T>(ArrowIpcReader reader, string column, Func<long, T> expected, Func<long, bool> isNull)
        where T : unmanaged, IEquatable<T>
    {
        using HugeArray<T> values = reader.ReadColumn<T>(column, AllocationOptions.Default, out HugeArray<byte> validity);
        using (validity)
        {
            Assert.Equal((IpcExpected.Rows + 7) / 8, validity.Length);
            for (long r = 0; r < values.Length; r++)
            {
                bool valid = IpcExpected.IsSet(validity, r);
                if (valid == isNull(r) || (valid && !values[r].Equals(expected(r))))
                {
                    Assert.Fail($"Column {column}, row {r}: {(valid ? values[r] : "null")}, expected {(isNull(r) ? "null" : expected(r))}.");
                }
            }
        }
    }
}
