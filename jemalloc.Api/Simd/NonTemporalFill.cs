using System.Runtime.CompilerServices;
using System.Runtime.Intrinsics;
using System.Runtime.Intrinsics.Arm;
using System.Runtime.Intrinsics.X86;

namespace jemalloc.Simd;

/// <summary>
/// Fills large blocks with non-temporal (streaming) stores: each cache line is written whole
/// without first being read into the cache (no read-for-ownership) and without evicting the cache's
/// contents, which is up to half the memory traffic of an ordinary store loop once the block is
/// larger than the last-level cache. x86/x64 (SSE2, AVX, AVX-512 streaming stores) and Arm64 (STNP
/// pair stores); elsewhere <see cref="IsSupported"/> is false and callers use <see cref="Span{T}.Fill"/>.
/// Whether a structure's fill streams is <see cref="FillPolicy"/>'s call.
/// </summary>
/// <remarks>
/// The bytes written are exactly those of an element-by-element fill: the head up to the first
/// 64-byte boundary and the tail after the last are written byte by byte from the value's bytes,
/// and the body is streamed from a pattern of lcm(sizeof(T), 64) bytes, phase-shifted to the
/// boundary, so any element size and any start address are correct.
/// </remarks>
internal static unsafe class NonTemporalFill
{
    // The pattern is built on the stack: element sizes whose lcm with 64 exceeds this fall back to Span<T>.Fill.
    private const int MaxPatternBytes = 4096;

    /// <summary>Below this the fixed costs (pattern set-up, fence) are not worth it, whatever the policy says.</summary>
    internal const nuint MinimumBytes = 64 * 1024;

    /// <summary>Whether the CPU has non-temporal vector stores (every x64 CPU has SSE2; every Arm64 CPU has STNP).</summary>
    internal static bool IsSupported => Sse2.IsSupported || AdvSimd.Arm64.IsSupported;

    /// <summary>Whether elements of <typeparamref name="T"/> can be streamed (their pattern fits).</summary>
    internal static bool CanStream<T>()
        where T : unmanaged => IsSupported && PatternBytes((nuint)sizeof(T)) <= MaxPatternBytes;

    /// <summary>
    /// Writes <paramref name="value"/> to the <paramref name="count"/> elements at <paramref name="destination"/>
    /// with non-temporal stores, then fences them.
    /// </summary>
    /// <returns><see langword="false"/>, having written nothing, if the block is too small, the CPU has no such stores or the element's pattern is too long.</returns>
    internal static bool TryFill<T>(T* destination, nuint count, T value)
        where T : unmanaged
    {
        if (!IsSupported)
        {
            return false;
        }

        nuint size = (nuint)sizeof(T);
        nuint patternBytes = PatternBytes(size);
        nuint bytes = count * size;
        if (patternBytes > MaxPatternBytes || bytes < MinimumBytes)
        {
            return false;
        }

        byte* start = (byte*)destination;
        byte* body = (byte*)(((nuint)start + 63) & ~(nuint)63);
        nuint head = (nuint)(body - start);
        nuint bodyBytes = (bytes - head) & ~(nuint)63;
        byte* tail = body + bodyBytes;
        byte* end = start + bytes;
        byte* valueBytes = (byte*)&value;

        // The head, byte by byte: element offsets 0.. with phase 0.
        for (nuint i = 0; i < head; i++)
        {
            start[i] = valueBytes[i % size];
        }

        byte* pattern = stackalloc byte[(int)patternBytes];
        nuint phase = head % size;
        for (nuint j = 0; j < patternBytes; j++)
        {
            pattern[j] = valueBytes[(phase + j) % size];
        }

        if (patternBytes == 64)
        {
            StreamOneLine(body, bodyBytes, pattern);
        }
        else
        {
            StreamPattern(body, bodyBytes, pattern, patternBytes);
        }

        // The tail, byte by byte, continuing the phase.
        nuint tailPhase = (head + bodyBytes) % size;
        for (byte* p = tail; p < end; p++)
        {
            *p = valueBytes[tailPhase];
            tailPhase = tailPhase + 1 == size ? 0 : tailPhase + 1;
        }

        Fence();
        return true;
    }

    /// <summary>
    /// Makes the streamed stores visible before any later store (e.g. a lease's release): on x86
    /// they are weakly ordered until a store fence; on Arm64 a full barrier orders them.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static void Fence()
    {
        if (Sse.IsSupported)
        {
            Sse.StoreFence();
        }
        else
        {
            Interlocked.MemoryBarrier();
        }
    }

    /// <summary>Stores one 64-byte line at <paramref name="p"/> (64-byte aligned) from <paramref name="line"/> (any alignment), non-temporally.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static void StreamLine(byte* p, byte* line)
    {
        if (Avx512F.IsSupported && Vector512.IsHardwareAccelerated)
        {
            Avx512F.StoreAlignedNonTemporal(p, Vector512.Load(line));
        }
        else if (Avx.IsSupported)
        {
            Avx.StoreAlignedNonTemporal(p, Vector256.Load(line));
            Avx.StoreAlignedNonTemporal(p + 32, Vector256.Load(line + 32));
        }
        else if (Sse2.IsSupported)
        {
            Sse2.StoreAlignedNonTemporal(p, Vector128.Load(line));
            Sse2.StoreAlignedNonTemporal(p + 16, Vector128.Load(line + 16));
            Sse2.StoreAlignedNonTemporal(p + 32, Vector128.Load(line + 32));
            Sse2.StoreAlignedNonTemporal(p + 48, Vector128.Load(line + 48));
        }
        else
        {
            AdvSimd.Arm64.StorePairNonTemporal(p, Vector128.Load(line), Vector128.Load(line + 16));
            AdvSimd.Arm64.StorePairNonTemporal(p + 32, Vector128.Load(line + 32), Vector128.Load(line + 48));
        }
    }

    private static nuint PatternBytes(nuint size) => size / Gcd(size, 64) * 64;

    // The body when one cache line holds whole elements (sizes 1, 2, 4, ... 64): the line stays in registers.
    private static void StreamOneLine(byte* p, nuint bytes, byte* pattern)
    {
        byte* end = p + bytes;
        if (Avx512F.IsSupported && Vector512.IsHardwareAccelerated)
        {
            Vector512<byte> line = Vector512.Load(pattern);
            for (; p + 256 <= end; p += 256)
            {
                Avx512F.StoreAlignedNonTemporal(p, line);
                Avx512F.StoreAlignedNonTemporal(p + 64, line);
                Avx512F.StoreAlignedNonTemporal(p + 128, line);
                Avx512F.StoreAlignedNonTemporal(p + 192, line);
            }

            for (; p < end; p += 64)
            {
                Avx512F.StoreAlignedNonTemporal(p, line);
            }
        }
        else if (Avx.IsSupported)
        {
            Vector256<byte> half = Vector256.Load(pattern);
            Vector256<byte> other = Vector256.Load(pattern + 32);
            for (; p + 128 <= end; p += 128)
            {
                Avx.StoreAlignedNonTemporal(p, half);
                Avx.StoreAlignedNonTemporal(p + 32, other);
                Avx.StoreAlignedNonTemporal(p + 64, half);
                Avx.StoreAlignedNonTemporal(p + 96, other);
            }

            for (; p < end; p += 64)
            {
                Avx.StoreAlignedNonTemporal(p, half);
                Avx.StoreAlignedNonTemporal(p + 32, other);
            }
        }
        else
        {
            Vector128<byte> a = Vector128.Load(pattern);
            Vector128<byte> b = Vector128.Load(pattern + 16);
            Vector128<byte> c = Vector128.Load(pattern + 32);
            Vector128<byte> d = Vector128.Load(pattern + 48);
            if (Sse2.IsSupported)
            {
                for (; p < end; p += 64)
                {
                    Sse2.StoreAlignedNonTemporal(p, a);
                    Sse2.StoreAlignedNonTemporal(p + 16, b);
                    Sse2.StoreAlignedNonTemporal(p + 32, c);
                    Sse2.StoreAlignedNonTemporal(p + 48, d);
                }
            }
            else
            {
                for (; p < end; p += 64)
                {
                    AdvSimd.Arm64.StorePairNonTemporal(p, a, b);
                    AdvSimd.Arm64.StorePairNonTemporal(p + 32, c, d);
                }
            }
        }
    }

    // The body for other element sizes: the pattern (a multiple of 64 bytes) is read from the stack, line by line.
    private static void StreamPattern(byte* p, nuint bytes, byte* pattern, nuint patternBytes)
    {
        byte* end = p + bytes;
        nuint offset = 0;
        for (; p < end; p += 64)
        {
            StreamLine(p, pattern + offset);
            offset += 64;
            if (offset == patternBytes)
            {
                offset = 0;
            }
        }
    }

    private static nuint Gcd(nuint a, nuint b)
    {
        while (b != 0)
        {
            (a, b) = (b, a % b);
        }

        return a;
    }
}
