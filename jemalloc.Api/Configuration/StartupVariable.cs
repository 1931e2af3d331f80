using System.Text;

namespace jemalloc.Configuration;

/// <summary>
/// One environment variable read once, in a static initializer: its value, or the default when it is
/// unset, empty or blank, or when its value is not understood. A static initializer cannot refuse a
/// value (its exception would make the type unusable), so a value not understood is kept in
/// <see cref="Ignored"/> and reported by <see cref="Note"/> in the settings' descriptions.
/// </summary>
/// <typeparam name="T">The setting's type.</typeparam>
internal sealed class StartupVariable<T>
    where T : struct
{
    // Longer values are cut in the note: a description stays one line per setting.
    internal const int ShownLength = 64;

    private StartupVariable(string name, T value, string? ignored, string defaultText)
    {
        Name = name;
        Value = value;
        Ignored = ignored;
        Note = ignored is null ? "" : $" ({name}={Shown(ignored)} not understood: {defaultText})";
    }

    /// <summary>The variable's name.</summary>
    internal string Name { get; }

    /// <summary>The value the process starts with: the variable's, or the default.</summary>
    internal T Value { get; }

    /// <summary>The variable's text when it was set but not understood (and the default used instead), else null.</summary>
    internal string? Ignored { get; }

    /// <summary>
    /// <c> (NAME=text not understood: default)</c> when the value was not understood, else empty: the
    /// same words for every variable, appended to the setting's value where it is described.
    /// </summary>
    internal string Note { get; }

    /// <summary>Reads <paramref name="name"/> from the environment (see <see cref="From"/>).</summary>
    internal static StartupVariable<T> Read(string name, Func<string, T?> parse, T defaultValue, string defaultText) =>
        From(name, Environment.GetEnvironmentVariable(name), parse, defaultValue, defaultText);

    /// <summary>
    /// Interprets <paramref name="text"/> as the value of <paramref name="name"/>: unset (null), empty or
    /// only blanks is the default, as if unset (the convention of shells and of Windows, where setting a
    /// variable to an empty value removes it); otherwise <paramref name="parse"/>'s value, or the default
    /// with the text kept as <see cref="Ignored"/> when it returns null.
    /// </summary>
    internal static StartupVariable<T> From(string name, string? text, Func<string, T?> parse, T defaultValue, string defaultText)
    {
        if (string.IsNullOrWhiteSpace(text))
        {
            return new StartupVariable<T>(name, defaultValue, null, defaultText);
        }

        T? parsed = parse(text);
        return parsed is T value
            ? new StartupVariable<T>(name, value, null, defaultText)
            : new StartupVariable<T>(name, defaultValue, text, defaultText);
    }

    /// <summary>The text as the note shows it: control characters as <c>?</c> (the note stays on one line), cut after <see cref="ShownLength"/> characters.</summary>
    internal static string Shown(string text)
    {
        bool cut = text.Length > ShownLength;
        // Not between the halves of a surrogate pair.
        int length = !cut ? text.Length : char.IsHighSurrogate(text[ShownLength - 1]) ? ShownLength - 1 : ShownLength;
        var shown = new StringBuilder(length + 3);
        foreach (char c in text.AsSpan(0, length))
        {
            shown.Append(char.IsControl(c) ? '?' : c);
        }

        return cut ? shown.Append("...").ToString() : shown.ToString();
    }
}
