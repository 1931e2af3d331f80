namespace jemalloc.Cli.Strings;

/// <summary>One category's group among the filtered rows.</summary>
/// <param name="Category">The category.</param>
/// <param name="Rows">The filtered rows of the category (null amounts included).</param>
/// <param name="AmountCents">The sum of their non-null amounts, in hundredths (the DECIMAL(18,2)'s unscaled value).</param>
public sealed record StringsGroup(string Category, long Rows, long AmountCents)
{
    /// <summary><paramref name="groups"/> in the ordinal order of their categories, the order every side reports them in.</summary>
    public static StringsGroup[] Sorted(IEnumerable<StringsGroup> groups)
    {
        StringsGroup[] sorted = [.. groups];
        Array.Sort(sorted, (a, b) => string.CompareOrdinal(a.Category, b.Category));
        return sorted;
    }
}
