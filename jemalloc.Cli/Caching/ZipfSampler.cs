namespace jemalloc.Cli.Caching;

/// <summary>
/// Draws ranks 0 to n - 1 with a Zipf distribution of exponent s &lt; 1 by Gray et al.'s method (the one YCSB
/// uses: one power per draw after an O(n) sum), and spreads them over the key space by a multiplicative
/// bijection, so the hot keys are not the first ones.
/// </summary>
public sealed class ZipfSampler
{
    // A prime above any key count: rank * Spread mod n is then a bijection of 0 .. n - 1.
    private const ulong Spread = 2_654_435_761;
    private readonly int _n;
    private readonly double _theta;
    private readonly double _zetaN;
    private readonly double _alpha;
    private readonly double _eta;
    private readonly double _half;

    /// <summary>Prepares draws over <paramref name="n"/> keys with exponent <paramref name="s"/>.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="n"/> is below 2 or above 2^31 - 1, or <paramref name="s"/> is not in (0, 1).</exception>
    public ZipfSampler(int n, double s)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(n, 2);
        if (s is <= 0 or >= 1)
        {
            throw new ArgumentOutOfRangeException(nameof(s), s, "The exponent must be above 0 and below 1.");
        }

        _n = n;
        _theta = s;
        double zeta2 = 1 + Math.Pow(0.5, s);
        double zetaN = 0;
        for (int i = 1; i <= n; i++)
        {
            zetaN += 1 / Math.Pow(i, s);
        }

        _zetaN = zetaN;
        _alpha = 1 / (1 - s);
        _eta = (1 - Math.Pow(2.0 / n, 1 - s)) / (1 - (zeta2 / zetaN));
        _half = 1 + Math.Pow(0.5, s);
    }

    /// <summary>The key of the rank that uniform <paramref name="u"/> in [0, 1) draws.</summary>
    public int Key(double u)
    {
        double uz = u * _zetaN;
        long rank = uz < 1 ? 0 : uz < _half ? 1 : (long)(_n * Math.Pow((_eta * u) - _eta + 1, _alpha));
        rank = Math.Min(rank, _n - 1);
        return (int)((ulong)rank * Spread % (ulong)_n);
    }

    /// <summary>The exponent.</summary>
    public double Exponent => _theta;
}
