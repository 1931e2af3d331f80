using System.Text;

namespace jemalloc.Arrow.Tests;

/// <summary>The string and dictionary columns the tests build from .NET strings (null for a null row).</summary>
internal static class TestColumns
{
    /// <summary>A string column of <paramref name="values"/>: UTF-8 text, or (not <paramref name="isUtf8"/>) binary holding their UTF-8 bytes.</summary>
    internal static NativeStringColumn Strings(IEnumerable<string?> values, bool isUtf8 = true)
    {
        using var builder = new NativeStringColumnBuilder(isUtf8);
        AppendAll(values, isUtf8, text => builder.Append(text), bytes => builder.Append(bytes));
        return builder.Build();
    }

    /// <summary>A dictionary column of <paramref name="values"/>, text or binary as <see cref="Strings"/>.</summary>
    internal static NativeDictionaryColumn Dictionary(IEnumerable<string?> values, bool isUtf8 = true)
    {
        using var builder = new NativeDictionaryColumnBuilder(isUtf8);
        AppendAll(values, isUtf8, text => builder.Append(text), bytes => builder.Append(bytes));
        return builder.Build();
    }

    // A null row is appended as text on either kind of column; a binary column takes the text's UTF-8 bytes.
    private static void AppendAll(IEnumerable<string?> values, bool isUtf8, Action<string?> appendText, Action<byte[]> appendBytes)
    {
        foreach (string? value in values)
        {
            if (isUtf8 || value is null)
            {
                appendText(value);
            }
            else
            {
                appendBytes(Encoding.UTF8.GetBytes(value));
            }
        }
    }
}
