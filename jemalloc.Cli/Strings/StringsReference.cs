using System.Globalization;

namespace jemalloc.Cli.Strings;

/// <summary>The right results of <c>jembench strings</c>' table, computed when it is made.</summary>
/// <param name="Rows">The table's rows.</param>
/// <param name="FilteredRows">The rows whose note starts with <see cref="StringsData.NotePrefix"/>.</param>
/// <param name="IdSum">The sum of the <c>id</c> column.</param>
/// <param name="StringBytes">The UTF-8 bytes of the three string columns together.</param>
/// <param name="Groups">The filtered rows grouped by category, in <see cref="StringsGroup.Sorted"/>'s order.</param>
public sealed record StringsReference(long Rows, long FilteredRows, long IdSum, long StringBytes, StringsGroup[] Groups)
{
    // Past this many wrong groups the rest are only counted.
    private const int MaxGroupLines = 5;

    /// <summary>What is wrong in <paramref name="result"/>, one line per wrong figure (none when it is right).</summary>
    public IReadOnlyList<string> Differences(StringsResult result)
    {
        ArgumentNullException.ThrowIfNull(result);
        var wrong = new List<string>();
        if (result.Rows != Rows)
        {
            wrong.Add(Invariant($"it loaded {result.Rows:N0} rows; the table has {Rows:N0}"));
        }

        if (result.IdSum != IdSum)
        {
            wrong.Add(Invariant($"the sum of the id column is {result.IdSum:N0}; the reference is {IdSum:N0}"));
        }

        if (result.FilteredRows != FilteredRows)
        {
            wrong.Add(Invariant($"{result.FilteredRows:N0} rows have a note starting with '{StringsData.NotePrefix}'; the reference has {FilteredRows:N0}"));
        }

        var expected = Groups.ToDictionary(g => g.Category, StringComparer.Ordinal);
        var groupLines = new List<string>();
        foreach (StringsGroup group in result.Groups)
        {
            if (!expected.Remove(group.Category, out StringsGroup? right))
            {
                groupLines.Add(Invariant($"category '{group.Category}' is not among the filtered rows' categories in the reference ({group.Rows:N0} rows)"));
            }
            else if (group.Rows != right.Rows || group.AmountCents != right.AmountCents)
            {
                groupLines.Add(Invariant($"category '{group.Category}' has {group.Rows:N0} rows and an amount of {Money(group.AmountCents)}; the reference has {right.Rows:N0} rows and {Money(right.AmountCents)}"));
            }
        }

        foreach (StringsGroup missing in expected.Values)
        {
            groupLines.Add(Invariant($"category '{missing.Category}' ({missing.Rows:N0} rows in the reference) is missing"));
        }

        wrong.AddRange(groupLines.Take(MaxGroupLines));
        if (groupLines.Count > MaxGroupLines)
        {
            wrong.Add(Invariant($"and {groupLines.Count - MaxGroupLines:N0} more wrong groups"));
        }

        return wrong;
    }

    private static string Money(long cents) => (cents / 100m).ToString("F2", CultureInfo.InvariantCulture);

    private static string Invariant(FormattableString text) => FormattableString.Invariant(text);
}
