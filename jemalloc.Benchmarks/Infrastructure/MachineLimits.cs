using System.Runtime.InteropServices;
using System.Runtime.Intrinsics;
using System.Runtime.Intrinsics.X86;

namespace jemalloc.Benchmarks.Infrastructure;

/// <summary>
/// The machine's fill limits, measured with code that is not the library's: the C library's
/// <c>memset</c> (glibc switches to <c>rep stosb</c> or streaming stores for big blocks) and a plain
/// non-temporal store loop of this benchmark project's own. The library's <c>Fill</c> is compared
/// against the better of the two.
/// </summary>
public static unsafe partial class MachineLimits
{
    /// <summary>The C library's <c>memset</c>.</summary>
    [LibraryImport("libc", EntryPoint = "memset")]
    [UnmanagedCallConv(CallConvs = [typeof(System.Runtime.CompilerServices.CallConvCdecl)])]
    private static partial void* Memset(void* destination, int value, nuint count);

    /// <summary><c>memset(destination, value, bytes)</c> of the C library, in one call.</summary>
    public static void LibcMemset(void* destination, byte value, nuint bytes) => Memset(destination, value, bytes);

    /// <summary>Whether <see cref="NonTemporalFill"/> streams (x86/x64); elsewhere it is an ordinary <see cref="Span{T}.Fill"/>.</summary>
    public static bool HasNonTemporalStores => Sse2.IsSupported;

    /// <summary>
    /// Writes <paramref name="value"/> to <paramref name="count"/> elements at <paramref name="destination"/>
    /// with non-temporal stores: the bytes up to the first 64-byte line one by one, whole lines
    /// streamed from a pattern of lcm(sizeof(T), 64) bytes (AVX-512, AVX or SSE2 stores), the rest one
    /// by one, then a store fence. Without SSE2 (Arm64) it is <see cref="Span{T}.Fill"/>.
    /// </summary>
    public static void NonTemporalFill<T>(T* destination, long count, T value)
        where T : unmanaged
    {
        int size = sizeof(T);
        int line = size / Gcd(size, 64) * 64;
        if (!Sse2.IsSupported || line > 4096)
        {
            for (long start = 0; start < count; start += int.MaxValue / 2)
            {
                new Span<T>(destination + start, (int)Math.Min(count - start, int.MaxValue / 2)).Fill(value);
            }

            return;
        }

        byte* bytes = (byte*)&value;
        byte* p = (byte*)destination;
        byte* end = p + count * size;
        long offset = 0; // byte offset from destination, for the element phase
        for (; ((nuint)p & 63) != 0 && p < end; p++, offset++)
        {
            *p = bytes[offset % size];
        }

        byte* pattern = stackalloc byte[line];
        for (int j = 0; j < line; j++)
        {
            pattern[j] = bytes[(offset + j) % size];
        }

        int at = 0;
        if (Avx512F.IsSupported)
        {
            for (; p + 64 <= end; p += 64)
            {
                Avx512F.StoreAlignedNonTemporal(p, Vector512.Load(pattern + at));
                at = at + 64 == line ? 0 : at + 64;
            }
        }
        else if (Avx.IsSupported)
        {
            for (; p + 64 <= end; p += 64)
            {
                Avx.StoreAlignedNonTemporal(p, Vector256.Load(pattern + at));
                Avx.StoreAlignedNonTemporal(p + 32, Vector256.Load(pattern + at + 32));
                at = at + 64 == line ? 0 : at + 64;
            }
        }
        else
        {
            for (; p + 64 <= end; p += 64)
            {
                for (int k = 0; k < 64; k += 16)
                {
                    Sse2.StoreAlignedNonTemporal(p + k, Vector128.Load(pattern + at + k));
                }

                at = at + 64 == line ? 0 : at + 64;
            }
        }

        for (int k = 0; p < end; p++, k++)
        {
            *p = pattern[at + k];
        }

        Sse.StoreFence();
    }

    private static int Gcd(int a, int b)
    {
        while (b != 0)
        {
            (a, b) = (b, a % b);
        }

        return a;
    }
}
