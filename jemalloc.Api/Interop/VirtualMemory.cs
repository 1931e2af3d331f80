using jemalloc.Internal;

namespace jemalloc.Interop;

/// <summary>
/// Address space reserved once and committed piece by piece, for tables that must never move (the
/// ledger's slot table: its base address is a constant on the hot path). Reserved space costs no
/// memory and no commit charge until committed.
/// </summary>
internal static unsafe partial class VirtualMemory
{
    /// <summary>Reserves <paramref name="bytes"/> of address space, inaccessible until committed.</summary>
    /// <exception cref="OutOfMemoryException">The OS refused the reservation.</exception>
    /// <exception cref="PlatformNotSupportedException">Neither Linux nor Windows.</exception>
    internal static void* Reserve(nuint bytes)
    {
        void* address = OperatingSystem.IsWindows() ? ReserveWindows(bytes)
            : OperatingSystem.IsLinux() ? ReserveLinux(bytes)
            : throw new PlatformNotSupportedException("jemalloc.NET runs on Linux and Windows.");
        if (address == null)
        {
            ThrowHelper.ThrowOutOfMemory($"The OS refused to reserve {bytes:N0} bytes of address space for the allocation ledger.");
        }

        return address;
    }

    /// <summary>Makes <paramref name="bytes"/> from <paramref name="address"/> (inside a reservation, page-aligned) readable and writable; the pages read as zero.</summary>
    /// <exception cref="OutOfMemoryException">The OS refused to commit the memory.</exception>
    internal static void Commit(void* address, nuint bytes)
    {
        bool committed = OperatingSystem.IsWindows() ? CommitWindows(address, bytes) : CommitLinux(address, bytes);
        if (!committed)
        {
            ThrowHelper.ThrowOutOfMemory($"The OS refused to commit {bytes:N0} more bytes for the allocation ledger.");
        }
    }
}
