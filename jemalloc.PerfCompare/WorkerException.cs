namespace jemalloc.PerfCompare;

/// <summary>A worker process failed to start, threw, or stopped answering (exit code 4).</summary>
internal sealed class WorkerException : Exception
{
    public WorkerException()
    {
    }

    public WorkerException(string message)
        : base(message)
    {
    }

    public WorkerException(string message, Exception innerException)
        : base(message, innerException)
    {
    }
}
