namespace jemalloc.PerfCompare;

/// <summary>A measurement computed a wrong result: the comparison fails (exit code 2), whatever the times.</summary>
internal sealed class ResultCheckException : Exception
{
    public ResultCheckException()
    {
    }

    public ResultCheckException(string message)
        : base(message)
    {
    }

    public ResultCheckException(string message, Exception innerException)
        : base(message, innerException)
    {
    }
}
