namespace jemalloc.Tests.Columns;

/// <summary>Columns built from managed values for the dictionary column's tests.</summary>
internal static class NativeDictionaryColumnTestData
{
    internal static NativeDictionaryColumn Build(IEnumerable<string?> values)
    {
        using var builder = new NativeDictionaryColumnBuilder();
        foreach (string? value in values)
        {
            builder.Append(value);
        }

        return builder.Build();
    }

    internal static NativeStringColumn BuildPlain(IEnumerable<byte[]?> values, bool isUtf8)
    {
        using var builder = new NativeStringColumnBuilder(isUtf8);
        foreach (byte[]? value in values)
        {
            if (value is null)
            {
                builder.AppendNull();
            }
            else
            {
                builder.Append(value);
            }
        }

        return builder.Build();
    }
}
