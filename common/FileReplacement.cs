using System.Runtime.InteropServices;

namespace jemalloc.AddOns;

/// <summary>
/// How the add-ons' writers write a file at a path without ever destroying what was there: the new
/// file is written to a temporary file of a hidden, unique name in the same folder, and moved over
/// the path (a rename, as the folder is the same volume) only once it is complete. A refused or
/// failed write deletes its temporary file and leaves whatever was at the path as it was. One source
/// for both add-ons, compiled into each (linked from common/).
/// </summary>
/// <remarks>
/// A symbolic link at the path is followed: the file it names is the one replaced, and the link stays.
/// A replaced file keeps its Unix permission bits (not its owner, which only the superuser could give).
/// A path that names something other than a file on Linux (a device such as <c>/dev/null</c>, a pipe)
/// is written in place as before, since a rename would replace the device or pipe itself.
/// The new file is not flushed to the disk before the rename: the guarantee is against a refused or
/// failed write, not against the machine losing power.
/// </remarks>
internal static partial class FileReplacement
{
    // statx(2): the current folder for relative paths, the file type asked for, and where the type is.
    private const int CurrentFolder = -100;
    private const uint StatxType = 1;
    private const int StatxModeOffset = 28;
    private const int StatxBufferBytes = 256;
    private const int TypeBits = 0xF000;
    private const int RegularFile = 0x8000;

    // Long names are cut in the temporary name, which must stay within the file system's 255 bytes.
    private const int NameCharsKept = 64;

    /// <summary>
    /// Writes a new file at <paramref name="path"/>: <paramref name="write"/> is given the path of an empty
    /// temporary file in the same folder to fill (and close), which then replaces whatever file was at
    /// <paramref name="path"/>. If anything throws, the temporary file is deleted and the path is untouched.
    /// </summary>
    /// <param name="path">The file's path (not empty; the caller has checked).</param>
    /// <param name="write">Writes the file at the path it is given, closing it before it returns.</param>
    /// <exception cref="ArgumentException"><paramref name="path"/> ends with a folder separator.</exception>
    /// <exception cref="DirectoryNotFoundException">The path's folder does not exist.</exception>
    /// <exception cref="UnauthorizedAccessException">The path is a folder, the file there cannot be written, or no file can be created in its folder.</exception>
    /// <exception cref="IOException">The temporary file cannot be created or moved over the path.</exception>
    internal static void Write(string path, Action<string> write)
    {
        string target = TargetOf(path);
        string? folder = Path.GetDirectoryName(target);
        string name = Path.GetFileName(target);
        if (Directory.Exists(target))
        {
            throw new UnauthorizedAccessException($"'{path}' is a folder; the writer writes a file and does not replace a folder.");
        }

        if (name.Length == 0 || folder is null)
        {
            throw new ArgumentException($"'{path}' names a folder, not a file.", nameof(path));
        }

        if (!Directory.Exists(folder))
        {
            throw new DirectoryNotFoundException($"The folder of '{path}' ('{folder}') does not exist.");
        }

        bool replaces = File.Exists(target);
        if (replaces && !IsRegularFile(target))
        {
            write(target);
            return;
        }

        if (replaces)
        {
            // Refused as opening it for writing would be (read-only, locked), without truncating it.
            using var probe = new FileStream(target, FileMode.Open, FileAccess.Write, FileShare.ReadWrite | FileShare.Delete, bufferSize: 0);
        }

        string temporary = CreateTemporary(folder, name, path);
        try
        {
            write(temporary);
            if (replaces && !OperatingSystem.IsWindows())
            {
                File.SetUnixFileMode(temporary, File.GetUnixFileMode(target));
            }

            File.Move(temporary, target, overwrite: true);
        }
        catch
        {
            DeleteTemporary(temporary);
            throw;
        }
    }

    // The file a symbolic link at the path names (the link itself would be replaced by a rename onto it).
    private static string TargetOf(string path)
    {
        string full = Path.GetFullPath(path);
        var file = new FileInfo(full);
        if (file.LinkTarget is not null && file.ResolveLinkTarget(returnFinalTarget: true) is FileSystemInfo final)
        {
            return final.FullName;
        }

        return full;
    }

    // Whether an existing path is a regular file; only Linux has devices and pipes among the add-ons' platforms.
    private static unsafe bool IsRegularFile(string target)
    {
        if (!OperatingSystem.IsLinux())
        {
            return true;
        }

        byte* buffer = stackalloc byte[StatxBufferBytes];
        try
        {
            if (Statx(CurrentFolder, target, 0, StatxType, buffer) != 0)
            {
                // Could not be asked (the file went meanwhile): the rename that follows reports what is wrong.
                return true;
            }
        }
        catch (Exception e) when (e is DllNotFoundException or EntryPointNotFoundException)
        {
            // A C library without statx (glibc before 2.28, musl): taken for a file, as most paths are.
            return true;
        }

        return (*(ushort*)(buffer + StatxModeOffset) & TypeBits) == RegularFile;
    }

    // `.name.<random>.tmp`: hidden on Unix, never the name asked for, and created new so that no other
    // file of that name (another writer's) is taken over.
    private static string CreateTemporary(string folder, string name, string path)
    {
        string kept = name.Length <= NameCharsKept ? name : name[..(char.IsHighSurrogate(name[NameCharsKept - 1]) ? NameCharsKept - 1 : NameCharsKept)];
        string temporary = Path.Combine(folder, $".{kept}.{Guid.NewGuid():N}.tmp");
        try
        {
            using var created = new FileStream(temporary, FileMode.CreateNew, FileAccess.Write, FileShare.None, bufferSize: 0);
        }
        catch (UnauthorizedAccessException e)
        {
            throw new UnauthorizedAccessException($"No file can be created in the folder of '{path}' ('{folder}'), where the writer writes the new file before it replaces the path: {e.Message}", e);
        }

        return temporary;
    }

    private static void DeleteTemporary(string temporary)
    {
        try
        {
            File.Delete(temporary);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            // The write's own exception, on its way out, says what went wrong; a temporary file that
            // cannot be deleted either (its folder made read-only meanwhile) stays under its hidden name.
        }
    }

    // glibc's statx (2.28 and later), whose buffer has the same layout on every architecture.
    [LibraryImport("libc", EntryPoint = "statx", StringMarshalling = StringMarshalling.Utf8)]
    private static unsafe partial int Statx(int folder, string path, int flags, uint mask, byte* buffer);
}
