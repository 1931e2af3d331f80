using System.Runtime.InteropServices;
using System.Runtime.Versioning;
using jemalloc.Interop;

namespace jemalloc.Simd;

internal static partial class LastLevelCache
{
    private const int RelationCache = 2;
    private const int CacheTypeInstruction = 1;

    // GetLogicalProcessorInformationEx(RelationCache): a run of variable-size records, each
    // { int Relationship; uint Size; CACHE_RELATIONSHIP { byte Level; byte Associativity;
    // ushort LineSize; uint CacheSize; int Type; ... } }.
    [SupportedOSPlatform("windows")]
    private static unsafe long? ReadWindows()
    {
        uint length = 0;
        _ = Kernel32.GetLogicalProcessorInformationEx(RelationCache, null, &length);
        if (length == 0)
        {
            return null;
        }

        byte* buffer = (byte*)NativeMemory.Alloc(length);
        try
        {
            if (Kernel32.GetLogicalProcessorInformationEx(RelationCache, buffer, &length) == 0)
            {
                return null;
            }

            long best = 0;
            int bestLevel = 0;
            for (uint offset = 0; offset + 20 <= length;)
            {
                byte* record = buffer + offset;
                uint size = *(uint*)(record + 4);
                if (size == 0)
                {
                    break;
                }

                if (*(int*)record == RelationCache && *(int*)(record + 16) != CacheTypeInstruction)
                {
                    int level = record[8];
                    long bytes = *(uint*)(record + 12);
                    if (level > bestLevel || (level == bestLevel && bytes > best))
                    {
                        (bestLevel, best) = (level, bytes);
                    }
                }

                offset += size;
            }

            return best > 0 ? best : null;
        }
        finally
        {
            NativeMemory.Free(buffer);
        }
    }
}
