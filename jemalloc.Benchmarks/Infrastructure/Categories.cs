namespace jemalloc.Benchmarks.Infrastructure;

/// <summary>The benchmark categories, one per jembench operation flag.</summary>
public static class Categories
{
    /// <summary><c>--create</c>: allocate (and, for the structures, fill) new memory.</summary>
    public const string Create = "create";

    /// <summary><c>--fill</c>: fill memory that exists already.</summary>
    public const string Fill = "fill";

    /// <summary><c>--math</c>: arithmetic over every element.</summary>
    public const string Math = "math";

    /// <summary><c>--fragment</c>: allocation patterns that do or do not fragment the heap.</summary>
    public const string Fragment = "fragment";

    /// <summary><c>--mandel</c>: the Mandelbrot kernel of the vector suite.</summary>
    public const string Mandelbrot = "mandel";
}
