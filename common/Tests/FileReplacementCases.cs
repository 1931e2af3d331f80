using System.Diagnostics;
using System.Runtime.Versioning;
using jemalloc.Tests.Support;

namespace jemalloc.AddOns.Tests;

/// <summary>
/// A writer's <c>Write(path)</c> never destroys what was at the path: the new file replaces it only when
/// complete, a refused or failed write leaves it byte for byte and leaves no temporary file, and the
/// folder, link and device cases do what a user expects. One source for both add-ons' test projects
/// (linked from common/Tests/): each says how its writer writes and fails.
/// </summary>
public abstract class FileReplacementCases : LedgerBalanced
{
    private static readonly byte[] Precious = [.. "precious: the user's own file, not a writer's\n"u8, 0, 1, 2, 254, 255];

    protected FileReplacementCases()
    {
        Folder = Path.Combine(Path.GetTempPath(), "jemalloc-replace-" + Guid.NewGuid().ToString("N"));
        Directory.CreateDirectory(Folder);
    }

    /// <summary>The ways a write is refused or fails.</summary>
    public enum Failure
    {
        /// <summary>No column was added: refused before anything is written.</summary>
        NoColumn,

        /// <summary>A column was disposed after it was added: refused when the write holds it.</summary>
        DisposedColumn,

        /// <summary>A column's data is found wrong after part of the file was written.</summary>
        MidWrite,
    }

    /// <summary>A folder of the test's own, deleted after it.</summary>
    protected string Folder { get; }

    public override void Dispose()
    {
        Directory.Delete(Folder, recursive: true);
        base.Dispose();
        GC.SuppressFinalize(this);
    }

    /// <summary>The rows of the good file's one column, <c>v</c>: row i holds i * 7.</summary>
    protected const int GoodRows = 32;

    /// <summary>Whether the writer can write a named pipe (one that seeks cannot: it fails in place).</summary>
    protected virtual bool WritesPipes => true;

    /// <summary>Writes a small valid file (its columns disposed before this returns).</summary>
    protected abstract void WriteGood(string path);

    /// <summary>Reads the file <see cref="WriteGood"/> wrote back, asserting its values.</summary>
    protected abstract void CheckGood(string path);

    /// <summary>The exception a <paramref name="failure"/> throws.</summary>
    protected abstract Type ExpectedFor(Failure failure);

    /// <summary>A write to <paramref name="path"/> that fails as <paramref name="failure"/> says (it throws).</summary>
    protected abstract void WriteFailing(Failure failure, string path);

    /// <summary>The good file's column, for <see cref="WriteGood"/> to write (the caller disposes it).</summary>
    protected static HugeArray<long> GoodValues()
    {
        var values = new HugeArray<long>(GoodRows);
        for (int i = 0; i < GoodRows; i++)
        {
            values[i] = i * 7L;
        }

        return values;
    }

    /// <summary>Asserts that <paramref name="values"/>, read back by <see cref="CheckGood"/>, are <see cref="GoodValues"/>'.</summary>
    protected static void AssertGoodValues(HugeArray<long> values)
    {
        Assert.Equal(GoodRows, values.Length);
        for (int i = 0; i < GoodRows; i++)
        {
            Assert.Equal(i * 7L, values[i]);
        }
    }

    [Theory]
    [InlineData(Failure.NoColumn)]
    [InlineData(Failure.DisposedColumn)]
    [InlineData(Failure.MidWrite)]
    public void An_existing_file_survives_a_refused_or_failed_write_byte_for_byte_and_no_temporary_file_is_left(Failure failure)
    {
        string path = Path.Combine(Folder, "mine.data");
        File.WriteAllBytes(path, Precious);
        Assert.Throws(ExpectedFor(failure), () => WriteFailing(failure, path));
        Assert.Equal(Precious, File.ReadAllBytes(path));
        Assert.Equal([path], Entries(Folder));
    }

    [Theory]
    [InlineData(Failure.NoColumn)]
    [InlineData(Failure.DisposedColumn)]
    [InlineData(Failure.MidWrite)]
    public void A_refused_or_failed_write_to_a_new_path_leaves_no_file_at_all(Failure failure)
    {
        string path = Path.Combine(Folder, "new.data");
        Assert.Throws(ExpectedFor(failure), () => WriteFailing(failure, path));
        Assert.Empty(Entries(Folder));
    }

    [Fact]
    public void A_write_replaces_an_existing_file_and_leaves_only_it()
    {
        string path = Path.Combine(Folder, "mine.data");
        File.WriteAllBytes(path, Precious);
        WriteGood(path);
        CheckGood(path);
        Assert.Equal([path], Entries(Folder));

        // A relative path is the same file.
        string current = Environment.CurrentDirectory;
        Environment.CurrentDirectory = Folder;
        try
        {
            WriteGood("mine.data");
        }
        finally
        {
            Environment.CurrentDirectory = current;
        }

        CheckGood(path);
        Assert.Equal([path], Entries(Folder));
    }

    [Fact]
    public void A_write_to_a_folder_s_path_is_refused_and_leaves_the_folder_as_it_was()
    {
        string folder = Path.Combine(Folder, "a-folder");
        Directory.CreateDirectory(folder);
        File.WriteAllBytes(Path.Combine(folder, "inside"), Precious);
        var refused = Assert.Throws<UnauthorizedAccessException>(() => WriteGood(folder));
        Assert.Contains(folder, refused.Message, StringComparison.Ordinal);
        Assert.Contains("folder", refused.Message, StringComparison.Ordinal);
        Assert.Equal(Precious, File.ReadAllBytes(Path.Combine(folder, "inside")));
        Assert.Equal([folder], Entries(Folder));
        Assert.Throws<ArgumentException>(() => WriteGood(Path.Combine(Folder, "no-such-folder") + Path.DirectorySeparatorChar));
        Assert.Equal([folder], Entries(Folder));
    }

    [Fact]
    public void A_write_into_a_folder_that_does_not_exist_throws_DirectoryNotFoundException_naming_the_path()
    {
        string path = Path.Combine(Folder, "missing", "x.data");
        var refused = Assert.Throws<DirectoryNotFoundException>(() => WriteGood(path));
        Assert.Contains(path, refused.Message, StringComparison.Ordinal);
        Assert.Empty(Entries(Folder));
    }

    [LinuxOnlyFact("Unix permissions, and chattr for the superuser")]
    [SupportedOSPlatform("linux")]
    public void A_write_into_a_folder_that_cannot_be_written_is_refused_and_leaves_its_file()
    {
        string folder = Path.Combine(Folder, "locked");
        Directory.CreateDirectory(folder);
        string path = Path.Combine(folder, "mine.data");
        File.WriteAllBytes(path, Precious);
        Lock(folder, locked: true);
        try
        {
            var refused = Assert.Throws<UnauthorizedAccessException>(() => WriteGood(path));
            Assert.Contains(path, refused.Message, StringComparison.Ordinal);
            Assert.Contains("No file can be created", refused.Message, StringComparison.Ordinal);
        }
        finally
        {
            Lock(folder, locked: false);
        }

        Assert.Equal(Precious, File.ReadAllBytes(path));
        Assert.Equal([path], Entries(folder));
    }

    [LinuxOnlyFact("Unix permission bits")]
    [SupportedOSPlatform("linux")]
    public void A_replaced_file_keeps_its_permission_bits()
    {
        string path = Path.Combine(Folder, "mine.data");
        File.WriteAllBytes(path, Precious);
        const UnixFileMode mode = UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.GroupRead;
        File.SetUnixFileMode(path, mode);
        WriteGood(path);
        CheckGood(path);
        Assert.Equal(mode, File.GetUnixFileMode(path));
    }

    [LinuxOnlyFact("symbolic links")]
    [SupportedOSPlatform("linux")]
    public void A_symbolic_link_is_followed_the_file_it_names_replaced_and_the_link_kept()
    {
        string elsewhere = Path.Combine(Folder, "elsewhere");
        Directory.CreateDirectory(elsewhere);
        string target = Path.Combine(elsewhere, "target.data");
        File.WriteAllBytes(target, Precious);
        string link = Path.Combine(Folder, "link.data");
        File.CreateSymbolicLink(link, Path.Combine("elsewhere", "target.data"));

        Assert.Throws(ExpectedFor(Failure.MidWrite), () => WriteFailing(Failure.MidWrite, link));
        Assert.Equal(Precious, File.ReadAllBytes(target));
        Assert.Equal([target], Entries(elsewhere));

        WriteGood(link);
        Assert.Equal(Path.Combine("elsewhere", "target.data"), new FileInfo(link).LinkTarget);
        CheckGood(target);
        Assert.Equal([target], Entries(elsewhere));
        Assert.Equal([elsewhere, link], Entries(Folder));
    }

    [LinuxOnlyFact("named pipes")]
    [SupportedOSPlatform("linux")]
    public void A_named_pipe_is_written_in_place_not_replaced()
    {
        string pipe = Path.Combine(Folder, "pipe");
        Run("mkfifo", pipe);
        byte[]? received = null;
        var reader = Task.Run(() => received = File.ReadAllBytes(pipe));
        Exception? failed = null;
        try
        {
            WriteGood(pipe);
        }
        catch (Exception e) when (!WritesPipes)
        {
            failed = e;
        }
        catch
        {
            // Opened and closed, so that the reader, still waiting for a writer, sees the end.
            new FileStream(pipe, FileMode.Open, FileAccess.Write).Dispose();
            throw;
        }

        Assert.True(reader.Wait(TimeSpan.FromMinutes(2)), "the pipe's reader never got the end of the file");
        if (WritesPipes)
        {
            Assert.NotEmpty(received!);
        }
        else
        {
            // The writer's own refusal to write where it cannot seek, which only a write in place meets.
            Assert.NotNull(failed);
        }

        Assert.Equal("fifo", Run("stat", "-c", "%F", pipe).Trim());
        Assert.Equal([pipe], Entries(Folder));
    }

    /// <summary>The folder's entries, sorted, temporary (hidden) ones included.</summary>
    protected static string[] Entries(string folder) =>
        [.. Directory.GetFileSystemEntries(folder).Order(StringComparer.Ordinal)];

    // chmod takes write permission away from others than the superuser; chattr +i from the superuser
    // too (where the file system has the attribute). Checked, so that the test cannot pass unlocked.
    [SupportedOSPlatform("linux")]
    private static void Lock(string folder, bool locked)
    {
        if (locked)
        {
            File.SetUnixFileMode(folder, UnixFileMode.UserRead | UnixFileMode.UserExecute);
            if (Environment.IsPrivilegedProcess)
            {
                Run("chattr", "+i", folder);
            }

            string probe = Path.Combine(folder, "probe");
            Assert.ThrowsAny<Exception>(() => File.WriteAllBytes(probe, Precious));
            Assert.False(File.Exists(probe), "the folder could not be made unwritable");
        }
        else
        {
            if (Environment.IsPrivilegedProcess)
            {
                Run("chattr", "-i", folder);
            }

            File.SetUnixFileMode(folder, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute);
        }
    }

    private static string Run(string program, params string[] arguments)
    {
        var start = new ProcessStartInfo(program) { RedirectStandardOutput = true, RedirectStandardError = true };
        foreach (string argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }

        using Process process = Process.Start(start)!;
        string output = process.StandardOutput.ReadToEnd();
        string error = process.StandardError.ReadToEnd();
        process.WaitForExit();
        Assert.True(process.ExitCode == 0, $"{program} {string.Join(' ', arguments)} failed: {error}");
        return output;
    }
}
