using jemalloc.Interop;

namespace jemalloc.Memory;

internal static partial class SystemMemory
{
    // Windows charges commit up front and refuses what exceeds it, so the commit room is what the
    // process can get (it includes the page file; ullAvailPhys is only shown). A job object's limit
    // is reflected in ullAvailPageFile for processes in the job.
    private static unsafe MemoryAvailability? QueryWindows()
    {
        MemoryStatusEx status = default;
        status.Length = (uint)sizeof(MemoryStatusEx);
        if (Kernel32.GlobalMemoryStatusEx(&status) == 0)
        {
            return null;
        }

        ulong bytes = Math.Min(status.AvailPageFile, status.AvailVirtual);
        return new MemoryAvailability(bytes, status.AvailPageFile,
            $"commit available {LinuxMemoryLimits.FormatGiB(status.AvailPageFile)}, physical free {LinuxMemoryLimits.FormatGiB(status.AvailPhys)}");
    }
}
