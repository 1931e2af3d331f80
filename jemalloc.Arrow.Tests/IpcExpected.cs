namespace jemalloc.Arrow.Tests;

/// <summary>The values arrow-check.js's write-types mode writes at each row, and which rows are null: the same formulas.</summary>
internal static class IpcExpected
{
    internal const string BatchLengths = "1,7,13,1000,4099,3";
    internal const long Rows = 1 + 7 + 13 + 1000 + 4099 + 3;

    internal static bool NullEvery5(long r) => r % 5 == 2;

    internal static sbyte I8(long r) => (sbyte)((r % 251) - 125);

    internal static byte U8(long r) => (byte)(r % 256);

    internal static short I16(long r) => (short)(((r * 3) % 60000) - 30000);

    internal static ushort U16(long r) => (ushort)((r * 5) % 65536);

    internal static int I32(long r) => (int)((r * 1001) - 5000000);

    internal static uint U32(long r) => (uint)(r * 70001);

    internal static long I64(long r) => (r * 3000000007L) - 9000000000000L;

    internal static ulong U64(long r) => (1UL << 63) + (ulong)r;

    internal static Half F16(long r) => (Half)(r % 1000);

    internal static float F32(long r) => r * 0.25f;

    internal static double F64(long r) => (r * 0.5) - 100;

    internal static bool B(long r) => r % 3 == 0;

    internal static bool BIsNull(long r) => r % 7 == 3;

    internal static int D32(long r) => (int)(r - 1000);

    internal static long D64(long r) => (r - 1000) * 86400000L;

    internal static long Ts(long r) => r * 1000001L;

    internal static int T32(long r) => (int)((r * 1000) % 86400000);

    internal static long T64(long r) => r * 999999937L;

    internal static long Dur(long r) => (r * 13) - 50;

    internal static bool IsSet(HugeArray<byte> bits, long row) => ((bits[row >> 3] >> (int)(row & 7)) & 1) != 0;
}
