using System.Numerics;

namespace jemalloc.Cli.Columnar;

/// <summary>
/// The sums of <c>jembench columnar</c> over raw column memory (a native block, or a pinned managed
/// array: the same code for both layouts), split into blocks over all cores.
/// </summary>
public static unsafe class ColumnarKernels
{
    /// <summary>Rows one task handles at a time.</summary>
    public const int BlockRows = 1 << 20;

    /// <summary>The sum of <paramref name="rows"/> values, one vector at a time.</summary>
    public static double Sum(double* column, long rows)
    {
        var total = Vector<double>.Zero;
        long i = 0;
        for (; i <= rows - Vector<double>.Count; i += Vector<double>.Count)
        {
            total += Vector.Load(column + i);
        }

        double sum = Vector.Sum(total);
        for (; i < rows; i++)
        {
            sum += column[i];
        }

        return sum;
    }

    /// <summary>The sum of a column over all cores (the data's sums are whole numbers, exact in any order).</summary>
    public static double ParallelSum(double* column, long rows)
    {
        long blocks = (rows + BlockRows - 1) / BlockRows;
        var partial = new double[blocks];
        nint start = (nint)column;
        Parallel.For(0L, blocks, b =>
        {
            long first = b * BlockRows;
            partial[b] = Sum((double*)start + first, Math.Min(BlockRows, rows - first));
        });
        return partial.Sum();
    }

    /// <summary>
    /// The sum across the columns of each of <paramref name="rows"/> rows from <paramref name="first"/>,
    /// written in place over the first column (whose own sum must be taken before).
    /// </summary>
    public static void AddRows(ReadOnlySpan<nint> columns, long first, long rows)
    {
        var target = (double*)columns[0] + first;
        long i = 0;
        for (; i <= rows - Vector<double>.Count; i += Vector<double>.Count)
        {
            Vector<double> sum = Vector.Load(target + i);
            for (int c = 1; c < columns.Length; c++)
            {
                sum += Vector.Load((double*)columns[c] + first + i);
            }

            sum.Store(target + i);
        }

        for (; i < rows; i++)
        {
            double sum = target[i];
            for (int c = 1; c < columns.Length; c++)
            {
                sum += ((double*)columns[c])[first + i];
            }

            target[i] = sum;
        }
    }

    /// <summary><see cref="AddRows"/> over all rows, a block per task over all cores.</summary>
    public static void ParallelAddRows(nint[] columns, long rows)
    {
        ArgumentNullException.ThrowIfNull(columns);
        long blocks = (rows + BlockRows - 1) / BlockRows;
        Parallel.For(0L, blocks, b =>
        {
            long first = b * BlockRows;
            AddRows(columns, first, Math.Min(BlockRows, rows - first));
        });
    }

    /// <summary><see cref="ColumnarData.RowCheckOf"/> of row sums held in memory, over all cores.</summary>
    public static ulong ParallelRowCheck(double* rowSums, long rows)
    {
        long blocks = (rows + BlockRows - 1) / BlockRows;
        var partial = new ulong[blocks];
        nint start = (nint)rowSums;
        Parallel.For(0L, blocks, b =>
        {
            long first = b * BlockRows;
            partial[b] = ColumnarData.RowCheckOf(new ReadOnlySpan<double>((double*)start + first, (int)Math.Min(BlockRows, rows - first)), first);
        });
        ulong check = 0;
        foreach (ulong p in partial)
        {
            check += p;
        }

        return check;
    }
}
