using System.Diagnostics.CodeAnalysis;
using System.Numerics;
using BenchmarkDotNet.Attributes;
using jemalloc.Benchmarks.Infrastructure;

namespace jemalloc.Benchmarks.Suites;

/// <summary>
/// The <c>vector</c> suite: a Mandelbrot plot (iteration counts of the region [-2, 1] x [-1, 1])
/// computed with <see cref="Vector{T}"/> into native memory (<see cref="SafeArray{T}"/>) and into a
/// managed array, on one thread and on all cores, against the scalar loop. Every plot is checked
/// against the scalar one.
/// </summary>
/// <typeparam name="T"><see cref="float"/> or <see cref="double"/>.</typeparam>
[SuppressMessage("Design", "CA1001:Types that own disposable fields should be disposable", Justification = "BenchmarkDotNet frees benchmark state in [GlobalCleanup], which disposes it.")]
public class MandelbrotBenchmarks<T> where T : unmanaged, IFloatingPointIeee754<T>
{
    /// <summary>The iteration limit of every pixel.</summary>
    public const int MaxIterations = 256;

    private int[] _reference = [];
    private int[]? _managed;
    private SafeArray<int>? _native;

    /// <summary>The sizes given on the command line.</summary>
    [SuppressMessage("Design", "CA1000:Do not declare static members on generic types", Justification = "BenchmarkDotNet reads [ParamsSource] from the benchmark class itself.")]
    public static IEnumerable<long> Sizes => SuiteParameters.Sizes;

    /// <summary>The plot's width in pixels; its height is two thirds of it.</summary>
    [ParamsSource(nameof(Sizes))]
    public long Parameter { get; set; }

    private int Width => checked((int)Parameter);

    private int Height => Math.Max(1, Width * 2 / 3);

    /// <summary>Computes the scalar reference plot and allocates both outputs.</summary>
    [GlobalSetup]
    public void Setup()
    {
        _reference = new int[Width * Height];
        for (int y = 0; y < Height; y++)
        {
            ScalarRow(_reference.AsSpan(y * Width, Width), y);
        }

        _managed = new int[Width * Height];
        _native = new SafeArray<int>(Width * Height);
    }

    /// <summary>The scalar loop into a managed array.</summary>
    [Benchmark(Baseline = true, Description = "Scalar loop, managed array")]
    [BenchmarkCategory(Categories.Mandelbrot)]
    public void ScalarManaged()
    {
        for (int y = 0; y < Height; y++)
        {
            ScalarRow(_managed.AsSpan(y * Width, Width), y);
        }
    }

    /// <summary>Vector&lt;T&gt; on one thread into a managed array.</summary>
    [Benchmark(Description = "Vector<T>, 1 thread, managed array")]
    [BenchmarkCategory(Categories.Mandelbrot)]
    public void VectorManaged()
    {
        for (int y = 0; y < Height; y++)
        {
            VectorRow(_managed.AsSpan(y * Width, Width), y);
        }
    }

    /// <summary>Vector&lt;T&gt; on one thread into a SafeArray.</summary>
    [Benchmark(Description = "Vector<T>, 1 thread, SafeArray")]
    [BenchmarkCategory(Categories.Mandelbrot)]
    public void VectorNative()
    {
        using MemoryLease<int> lease = _native!.Lease();
        for (int y = 0; y < Height; y++)
        {
            VectorRow(lease.AsSpan(y * Width, Width), y);
        }
    }

    /// <summary>Vector&lt;T&gt; on all cores (rows in parallel) into a managed array.</summary>
    [Benchmark(Description = "Vector<T>, all cores, managed array")]
    [BenchmarkCategory(Categories.Mandelbrot)]
    public void ParallelVectorManaged() => Parallel.For(0, Height, y => VectorRow(_managed.AsSpan(y * Width, Width), y));

    /// <summary>Vector&lt;T&gt; on all cores (rows in parallel) into a SafeArray.</summary>
    [Benchmark(Description = "Vector<T>, all cores, SafeArray")]
    [BenchmarkCategory(Categories.Mandelbrot)]
    public void ParallelVectorNative()
    {
        // Each row leases the array for as long as it writes into it.
        SafeArray<int> native = _native!;
        Parallel.For(0, Height, y =>
        {
            using MemoryLease<int> lease = native.Lease();
            VectorRow(lease.AsSpan(y * Width, Width), y);
        });
    }

    /// <summary>Checks the plots against the scalar reference and frees the outputs.</summary>
    [GlobalCleanup]
    public void Cleanup()
    {
        try
        {
            string name = $"vector mandelbrot {typeof(T).Name} {Width}x{Height}";
            // Each benchmark writes one of the two outputs; the other still holds zeros.
            bool managedWritten = _managed.AsSpan().ContainsAnyExcept(0);
            using MemoryLease<int> lease = _native!.Lease();
            bool nativeWritten = lease.Span.ContainsAnyExcept(0);
            ResultChecks.Check(name, managedWritten || nativeWritten, "a plot was computed");
            if (managedWritten)
            {
                BrokenResultSwitch.Corrupt(_managed.AsSpan());
                ResultChecks.Check(name, _managed.AsSpan().SequenceEqual(_reference), "the managed plot equals the scalar plot pixel for pixel");
            }

            if (nativeWritten)
            {
                BrokenResultSwitch.Corrupt(lease.Span);
                ResultChecks.Check(name, lease.Span.SequenceEqual(_reference), "the SafeArray plot equals the scalar plot pixel for pixel");
            }
        }
        finally
        {
            _native?.Dispose();
            _native = null;
            _managed = null;
        }
    }

    private static T Scale(int pixel, int pixels, T from, T to) =>
        from + ((to - from) * T.CreateTruncating(pixel) / T.CreateTruncating(pixels));

    private void ScalarRow(Span<int> row, int y)
    {
        T imaginary = Scale(y, Height, -T.One, T.One);
        for (int x = 0; x < row.Length; x++)
        {
            row[x] = ScalarPixel(Scale(x, Width, T.CreateTruncating(-2), T.One), imaginary);
        }
    }

    private void VectorRow(Span<int> row, int y)
    {
        int lanes = Vector<T>.Count;
        T imaginaryScalar = Scale(y, Height, -T.One, T.One);
        var imaginary = new Vector<T>(imaginaryScalar);
        var four = new Vector<T>(T.CreateTruncating(4));
        var two = new Vector<T>(T.CreateTruncating(2));
        Span<T> reals = stackalloc T[lanes];
        Span<T> counts = stackalloc T[lanes];
        int x = 0;
        for (; x + lanes <= row.Length; x += lanes)
        {
            for (int lane = 0; lane < lanes; lane++)
            {
                reals[lane] = Scale(x + lane, Width, T.CreateTruncating(-2), T.One);
            }

            var real = new Vector<T>(reals);
            Vector<T> zr = Vector<T>.Zero, zi = Vector<T>.Zero, iterations = Vector<T>.Zero;
            for (int i = 0; i < MaxIterations; i++)
            {
                Vector<T> zr2 = zr * zr;
                Vector<T> zi2 = zi * zi;
                Vector<T> inside = Vector.LessThanOrEqual(zr2 + zi2, four);
                if (inside == Vector<T>.Zero)
                {
                    break;
                }

                // Lanes still inside count one more iteration and move on; escaped lanes keep their values.
                iterations += Vector.ConditionalSelect(inside, Vector<T>.One, Vector<T>.Zero);
                Vector<T> nextZi = (two * zr * zi) + imaginary;
                zr = Vector.ConditionalSelect(inside, zr2 - zi2 + real, zr);
                zi = Vector.ConditionalSelect(inside, nextZi, zi);
            }

            iterations.CopyTo(counts);
            for (int lane = 0; lane < lanes; lane++)
            {
                row[x + lane] = int.CreateTruncating(counts[lane]);
            }
        }

        for (; x < row.Length; x++)
        {
            row[x] = ScalarPixel(Scale(x, Width, T.CreateTruncating(-2), T.One), imaginaryScalar);
        }
    }

    private static int ScalarPixel(T real, T imaginary)
    {
        T four = T.CreateTruncating(4);
        T zr = T.Zero, zi = T.Zero;
        int iterations = 0;
        while (iterations < MaxIterations)
        {
            T zr2 = zr * zr;
            T zi2 = zi * zi;
            if (zr2 + zi2 > four)
            {
                break;
            }

            T nextZi = (T.CreateTruncating(2) * zr * zi) + imaginary;
            zr = zr2 - zi2 + real;
            zi = nextZi;
            iterations++;
        }

        return iterations;
    }
}
