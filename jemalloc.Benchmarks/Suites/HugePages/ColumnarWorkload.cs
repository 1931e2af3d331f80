using System.Numerics;

namespace jemalloc.Benchmarks.Suites.HugePages;

/// <summary>
/// The shape of the <c>hugepages</c> suite's columnar workload, set by the verb before the run, and
/// its kernels: fill a column with pseudo-random numbers, sum a column (vertical), add columns
/// element by element into a result column (horizontal: one sum per row).
/// </summary>
public static unsafe class ColumnarWorkload
{
    /// <summary>The default number of data columns.</summary>
    public const int DefaultColumns = 4;

    private static int s_columns = DefaultColumns;
    private static long s_budgetBytes = long.MaxValue;

    /// <summary>The number of data columns (a result column comes on top).</summary>
    /// <exception cref="ArgumentOutOfRangeException">Less than 1.</exception>
    public static int Columns
    {
        get => s_columns;
        set
        {
            ArgumentOutOfRangeException.ThrowIfLessThan(value, 1);
            s_columns = value;
        }
    }

    /// <summary>The memory budget of all columns together, in bytes; the jemalloc variants allocate in a <see cref="JemArena"/> with this budget.</summary>
    /// <exception cref="ArgumentOutOfRangeException">Not positive.</exception>
    public static long BudgetBytes
    {
        get => s_budgetBytes;
        set
        {
            ArgumentOutOfRangeException.ThrowIfNegativeOrZero(value);
            s_budgetBytes = value;
        }
    }

    /// <summary>
    /// The bytes jemalloc takes for the data and result columns of <paramref name="rows"/> rows: each
    /// column rounded up to its jemalloc size class. Computed without calling jemalloc, so that the
    /// library can still be started with the run's configuration afterwards.
    /// </summary>
    public static long NativeBytes(long rows, int columns) => (columns + 1L) * LargeSizeClass(checked(rows * sizeof(ulong)));

    /// <summary>
    /// jemalloc's size class for a large allocation (above 16 KiB; smaller sizes are rounded up to
    /// whole pages, never less than jemalloc takes): each power-of-two range is split into four
    /// classes, so a size is rounded up to a multiple of a quarter of the power of two below it.
    /// </summary>
    public static long LargeSizeClass(long bytes)
    {
        const long Page = 4096;
        if (bytes <= 4 * Page)
        {
            return (bytes + Page - 1) / Page * Page;
        }

        int lg = 63 - BitOperations.LeadingZeroCount((ulong)(bytes - 1));
        long delta = 1L << (lg - 2);
        return (bytes + delta - 1) / delta * delta;
    }

    /// <summary>
    /// Fills a column with pseudo-random numbers: one xorshift64 generator per vector lane, seeded
    /// from <paramref name="seed"/>, so that generating stays cheap next to touching the memory.
    /// </summary>
    public static void FillRandom(ulong* column, long rows, ulong seed)
    {
        Vector<ulong> state = SeedLanes(seed);
        long i = 0;
        for (; i <= rows - Vector<ulong>.Count; i += Vector<ulong>.Count)
        {
            state = Step(state);
            state.Store(column + i);
        }

        if (i < rows)
        {
            state = Step(state);
            for (int lane = 0; i < rows; i++, lane++)
            {
                column[i] = state[lane];
            }
        }
    }

    /// <summary>The sum of a column, wrapping on overflow.</summary>
    public static ulong Sum(ulong* column, long rows)
    {
        var total = Vector<ulong>.Zero;
        long i = 0;
        for (; i <= rows - Vector<ulong>.Count; i += Vector<ulong>.Count)
        {
            total += Vector.Load(column + i);
        }

        ulong sum = Vector.Sum(total);
        for (; i < rows; i++)
        {
            sum += column[i];
        }

        return sum;
    }

    /// <summary>Adds <paramref name="source"/> to <paramref name="destination"/> element by element.</summary>
    public static void AddInto(ulong* destination, ulong* source, long rows)
    {
        long i = 0;
        for (; i <= rows - Vector<ulong>.Count; i += Vector<ulong>.Count)
        {
            (Vector.Load(destination + i) + Vector.Load(source + i)).Store(destination + i);
        }

        for (; i < rows; i++)
        {
            destination[i] += source[i];
        }
    }

    /// <summary>
    /// Runs the workload over given columns: fills each, sums each (vertical), adds them all into
    /// <paramref name="result"/> (horizontal), and returns the sum of the vertical sums plus the sum
    /// of the result column; both halves are equal when everything went right.
    /// </summary>
    public static (ulong Vertical, ulong Horizontal) Run(ReadOnlySpan<nint> columns, ulong* result, long rows)
    {
        ulong vertical = 0;
        for (int c = 0; c < columns.Length; c++)
        {
            FillRandom((ulong*)columns[c], rows, (ulong)c + 1);
            vertical += Sum((ulong*)columns[c], rows);
        }

        Buffer.MemoryCopy((void*)columns[0], result, rows * sizeof(ulong), rows * sizeof(ulong));
        for (int c = 1; c < columns.Length; c++)
        {
            AddInto(result, (ulong*)columns[c], rows);
        }

        return (vertical, Sum(result, rows));
    }

    /// <summary>The expected vertical total, computed by the same generators without storing the columns.</summary>
    public static ulong ExpectedTotal(long rows, int columns)
    {
        ulong total = 0;
        for (int c = 0; c < columns; c++)
        {
            Vector<ulong> state = SeedLanes((ulong)c + 1);
            var sum = Vector<ulong>.Zero;
            long i = 0;
            for (; i <= rows - Vector<ulong>.Count; i += Vector<ulong>.Count)
            {
                state = Step(state);
                sum += state;
            }

            total += Vector.Sum(sum);
            if (i < rows)
            {
                state = Step(state);
                for (int lane = 0; i < rows; i++, lane++)
                {
                    total += state[lane];
                }
            }
        }

        return total;
    }

    /// <summary>
    /// Whether every row of <paramref name="result"/> holds the sum (wrapping) of that row of the
    /// <paramref name="columns"/> columns <see cref="Run"/> fills: the numbers are generated again
    /// here, so the whole result is checked, not only its total.
    /// </summary>
    public static bool ResultIsRight(ReadOnlySpan<ulong> result, long firstRow, int columns)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(firstRow);
        // The generator runs a vector of rows at a time: start from the vector holding firstRow.
        int width = Vector<ulong>.Count;
        var states = new Vector<ulong>[columns];
        for (int c = 0; c < columns; c++)
        {
            states[c] = SeedLanes((ulong)c + 1);
            for (long step = 0; step < firstRow / width; step++)
            {
                states[c] = Step(states[c]);
            }
        }

        int lane = (int)(firstRow % width);
        Vector<ulong> expected = Vector<ulong>.Zero;
        bool right = true;
        for (int i = 0; i < result.Length; i++)
        {
            if (i == 0 || lane == width)
            {
                if (lane == width)
                {
                    lane = 0;
                }

                expected = Vector<ulong>.Zero;
                for (int c = 0; c < columns; c++)
                {
                    states[c] = Step(states[c]);
                    expected += states[c];
                }
            }

            right &= result[i] == expected[lane];
            lane++;
        }

        return right;
    }

    private static Vector<ulong> Step(Vector<ulong> x)
    {
        x ^= Vector.ShiftLeft(x, 13);
        x ^= Vector.ShiftRightLogical(x, 7);
        x ^= Vector.ShiftLeft(x, 17);
        return x;
    }

    private static Vector<ulong> SeedLanes(ulong seed)
    {
        Span<ulong> lanes = stackalloc ulong[Vector<ulong>.Count];
        for (int lane = 0; lane < lanes.Length; lane++)
        {
            // Distinct, never-zero starting states (xorshift stays at zero forever).
            lanes[lane] = (seed * 0x9E3779B97F4A7C15UL) ^ ((ulong)(lane + 1) * 0xD1B54A32D192ED03UL) | 1;
        }

        return new Vector<ulong>(lanes);
    }
}
