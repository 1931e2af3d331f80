namespace jemalloc.Simd;

/// <summary>
/// Copies large blocks with non-temporal (streaming) stores to the destination: the source is read
/// as usual, each destination line is written whole without being read first. The companion of
/// <see cref="NonTemporalFill"/>, used where <see cref="FillPolicy"/> streams big writes.
/// </summary>
internal static unsafe class NonTemporalCopy
{
    /// <summary>
    /// Copies <paramref name="bytes"/> bytes from <paramref name="source"/> to <paramref name="destination"/>
    /// with non-temporal stores, then fences them.
    /// </summary>
    /// <returns><see langword="false"/>, having written nothing, if the block is too small, the CPU has no such stores or the blocks overlap.</returns>
    internal static bool TryCopy(byte* destination, byte* source, nuint bytes)
    {
        if (!NonTemporalFill.IsSupported || bytes < NonTemporalFill.MinimumBytes
            || (destination < source + bytes && source < destination + bytes))
        {
            return false;
        }

        byte* body = (byte*)(((nuint)destination + 63) & ~(nuint)63);
        nuint head = (nuint)(body - destination);
        nuint bodyBytes = (bytes - head) & ~(nuint)63;
        Buffer.MemoryCopy(source, destination, head, head);
        byte* from = source + head;
        for (byte* p = body, end = body + bodyBytes; p < end; p += 64, from += 64)
        {
            NonTemporalFill.StreamLine(p, from);
        }

        nuint tail = bytes - head - bodyBytes;
        Buffer.MemoryCopy(from, body + bodyBytes, tail, tail);
        NonTemporalFill.Fence();
        return true;
    }
}
