using jemalloc.Interop;

namespace jemalloc.Tests.Memory;

/// <summary>Counts the pages of a range that <c>/proc/self/pagemap</c> shows present or swapped, and maps fresh memory.</summary>
internal static unsafe class PageMap
{
    private const int ProtReadWrite = 0x1 | 0x2;
    private const int MapPrivateAnonymous = 0x02 | 0x20;

    internal static nuint PageSize => (nuint)Environment.SystemPageSize;

    /// <summary>The pages, wholly or partly in the range, that are present or swapped.</summary>
    internal static long ResidentPages(void* start, nuint length)
    {
        int pagemap = Libc.Open("/proc/self/pagemap", Libc.OpenReadOnlyCloseOnExec);
        Assert.True(pagemap >= 0, "/proc/self/pagemap cannot be opened.");
        try
        {
            nuint first = (nuint)start / PageSize;
            nuint last = ((nuint)start + length - 1) / PageSize;
            long resident = 0;
            ulong entry;
            for (nuint page = first; page <= last; page++)
            {
                Assert.Equal(sizeof(ulong), (int)Libc.Pread(pagemap, &entry, sizeof(ulong), (long)(page * sizeof(ulong))));
                resident += (entry & ((1UL << 63) | (1UL << 62))) != 0 ? 1 : 0;
            }

            return resident;
        }
        finally
        {
            _ = Libc.Close(pagemap);
        }
    }

    /// <summary>A fresh private anonymous mapping (no page present).</summary>
    internal static byte* Map(nuint length)
    {
        void* address = Mmap(null, length, ProtReadWrite, MapPrivateAnonymous, -1, 0);
        Assert.True(address != (void*)-1, "mmap failed");
        return (byte*)address;
    }

    internal static void Unmap(byte* address, nuint length) => Assert.Equal(0, Munmap(address, length));

    [System.Runtime.InteropServices.DllImport("libc", EntryPoint = "mmap")]
    private static extern void* Mmap(void* address, nuint length, int protection, int flags, int fd, nint offset);

    [System.Runtime.InteropServices.DllImport("libc", EntryPoint = "munmap")]
    private static extern int Munmap(void* address, nuint length);
}
