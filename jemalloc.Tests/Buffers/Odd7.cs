using System.Runtime.InteropServices;

namespace jemalloc.Tests.Buffers;

/// <summary>A 7-byte element (packed, so its int is misaligned in every other element).</summary>
[StructLayout(LayoutKind.Sequential, Pack = 1)]
internal readonly record struct Odd7(int A, short B, byte C);
