namespace jemalloc.Tests.Buffers;

/// <summary>A 3-byte element: its fill pattern never lines up with a cache line or a vector.</summary>
internal readonly record struct Odd3(byte A, byte B, byte C);
