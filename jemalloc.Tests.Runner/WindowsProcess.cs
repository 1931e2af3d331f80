using System.Runtime.InteropServices;

namespace jemalloc.Tests.Runner;

/// <summary>Ends the process at once on Windows, skipping the runtime's and the DLLs' shutdown.</summary>
/// <remarks>
/// Under wine, a .NET process whose work is done sometimes never finishes exiting: its main thread
/// is gone and wine's helper threads wait on the wine server for ever (seen with and without a
/// failed test, never on Linux). The runner has printed and flushed its results by then, so it
/// ends itself with TerminateProcess instead of the normal shutdown; nothing is left to run.
/// </remarks>
internal static partial class WindowsProcess
{
    public static void Terminate(int exitCode)
    {
        if (OperatingSystem.IsWindows())
        {
            Console.Out.Flush();
            Console.Error.Flush();
            TerminateProcess(GetCurrentProcess(), (uint)exitCode);
        }
    }

    [LibraryImport("kernel32.dll")]
    private static partial nint GetCurrentProcess();

    [LibraryImport("kernel32.dll", SetLastError = true)]
    [return: MarshalAs(UnmanagedType.Bool)]
    private static partial bool TerminateProcess(nint process, uint exitCode);
}
