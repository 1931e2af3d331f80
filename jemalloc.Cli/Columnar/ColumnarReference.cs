namespace jemalloc.Cli.Columnar;

/// <summary>The right results of <c>jembench columnar</c>'s data, computed when it is generated.</summary>
/// <param name="ColumnSums">The sum of every column, in column order.</param>
/// <param name="RowCheck">The row sums' check value (<see cref="ColumnarData.RowCheckOf"/>).</param>
public sealed record ColumnarReference(double[] ColumnSums, ulong RowCheck)
{
    /// <summary>What is wrong in <paramref name="result"/>, one line per wrong sum (none when it is right).</summary>
    public IReadOnlyList<string> Differences(ColumnarResult result)
    {
        ArgumentNullException.ThrowIfNull(result);
        var wrong = new List<string>();
        if (result.ColumnSums.Length != ColumnSums.Length)
        {
            wrong.Add($"{result.ColumnSums.Length} column sums; the file has {ColumnSums.Length} columns");
        }

        for (int c = 0; c < Math.Min(ColumnSums.Length, result.ColumnSums.Length); c++)
        {
            // The sums are whole numbers below 2^53, exact in any order: equal means bit for bit.
            if (result.ColumnSums[c] != ColumnSums[c])
            {
                wrong.Add(FormattableString.Invariant($"the sum of column {c} is {result.ColumnSums[c]:R}; the reference is {ColumnSums[c]:R}"));
            }
        }

        if (result.RowCheck != RowCheck)
        {
            wrong.Add(FormattableString.Invariant($"the row sums' check value is {result.RowCheck:X16}; the reference is {RowCheck:X16} (a row's sum across the columns is wrong)"));
        }

        return wrong;
    }
}
