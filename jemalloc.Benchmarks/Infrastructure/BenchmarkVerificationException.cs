namespace jemalloc.Benchmarks.Infrastructure;

/// <summary>A benchmark produced a wrong result.</summary>
public sealed class BenchmarkVerificationException : Exception
{
    /// <summary>Creates the exception with a message.</summary>
    public BenchmarkVerificationException(string message) : base(message)
    {
    }

    /// <summary>Creates the exception with a message and a cause.</summary>
    public BenchmarkVerificationException(string message, Exception innerException) : base(message, innerException)
    {
    }

    /// <summary>Creates the exception with a default message.</summary>
    public BenchmarkVerificationException() : base("A benchmark produced a wrong result.")
    {
    }
}
