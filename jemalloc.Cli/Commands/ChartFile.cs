using ScottPlot;

namespace jemalloc.Cli.Commands;

/// <summary>
/// The file a verb's <c>--plot</c> writes (SVG or PNG by its extension): checked before anything runs,
/// and written after the results are checked, with a failure to write reported as a command-line error.
/// </summary>
internal static class ChartFile
{
    /// <summary>Checks, before anything runs, that a chart can be written to <paramref name="path"/>.</summary>
    /// <param name="path">The chart's file.</param>
    /// <param name="verb">The verb the messages name.</param>
    /// <exception cref="CommandLineException">The extension is not .svg or .png, the folder does not exist, or the path is a folder.</exception>
    internal static void CheckPath(string path, string verb)
    {
        ArgumentNullException.ThrowIfNull(path);
        string extension = Path.GetExtension(path);
        if (!IsSvg(path) && !extension.Equals(".png", StringComparison.OrdinalIgnoreCase))
        {
            throw new CommandLineException($"{verb}: --plot writes an .svg or a .png file; '{path}' has {(extension.Length == 0 ? "no extension" : $"the extension '{extension}'")}.");
        }

        string? folder = Path.GetDirectoryName(Path.GetFullPath(path));
        if (folder is null || !Directory.Exists(folder))
        {
            throw new CommandLineException($"{verb}: --plot: the folder of '{path}' does not exist.");
        }

        if (Directory.Exists(path))
        {
            throw new CommandLineException($"{verb}: --plot: '{path}' is a folder, not a file.");
        }
    }

    /// <summary>Saves <paramref name="plot"/> to <paramref name="path"/>, as SVG or PNG by its extension.</summary>
    internal static void Save(Plot plot, string path, int width, int height)
    {
        if (IsSvg(path))
        {
            plot.SaveSvg(path, width, height);
        }
        else
        {
            plot.SavePng(path, width, height);
        }
    }

    /// <summary>
    /// Writes a verb's chart to <paramref name="path"/> with <paramref name="write"/> and says so on
    /// <paramref name="output"/>; a file that cannot be written is reported on <paramref name="error"/>.
    /// </summary>
    /// <returns><see cref="Program.ExitSuccess"/>, or <see cref="Program.ExitBadArguments"/> when the file could not be written.</returns>
    internal static int Write(string verb, string path, Action<string> write, TextWriter output, TextWriter error)
    {
        try
        {
            write(path);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            error.WriteLine($"{verb}: the chart could not be written to '{path}': {e.Message}");
            return Program.ExitBadArguments;
        }

        output.WriteLine($"{verb}: chart written to {path}.");
        return Program.ExitSuccess;
    }

    private static bool IsSvg(string path) => Path.GetExtension(path).Equals(".svg", StringComparison.OrdinalIgnoreCase);
}
