namespace jemalloc;

/// <summary>
/// Thrown when a <c>mallctl</c> call fails: names the key, the error and what it usually means.
/// </summary>
public sealed class MallctlException : InvalidOperationException
{
    /// <summary>Creates the exception for a failed call on <paramref name="name"/>.</summary>
    public MallctlException(string name, MallctlError error, string? detail = null)
        : base(Describe(name, error, detail))
    {
        Name = name;
        Error = error;
    }

    /// <summary>Creates the exception with a message.</summary>
    public MallctlException(string message) : base(message) => Name = string.Empty;

    /// <summary>Creates the exception with a message and the error that caused it.</summary>
    public MallctlException(string message, Exception innerException) : base(message, innerException) => Name = string.Empty;

    /// <summary>Creates the exception with a default message.</summary>
    public MallctlException() : base("A mallctl call failed.") => Name = string.Empty;

    private MallctlException(string name, MallctlError error, string message, Exception? innerException)
        : base(message, innerException)
    {
        Name = name;
        Error = error;
    }

    /// <summary>The mallctl key, e.g. <c>arenas.narenas</c>.</summary>
    public string Name { get; }

    /// <summary>The error jemalloc returned.</summary>
    public MallctlError Error { get; }

    /// <summary>A call the library refuses before it reaches jemalloc (it would crash the process or corrupt the library's state).</summary>
    internal static MallctlException Refused(string name, string reason) =>
        new(name, MallctlError.NotPermitted, $"mallctl '{name}' is refused by jemalloc.NET: {reason}", null);

    private static string Describe(string name, MallctlError error, string? detail)
    {
        string meaning = error switch
        {
            MallctlError.NotFound => "no such key, or the feature behind it is not built into this jemalloc (ENOENT)",
            MallctlError.NotPermitted => "the key is read-only or the operation is not permitted (EPERM)",
            MallctlError.InvalidValue => "the value's type or size does not match the key, or the value is not allowed (EINVAL)",
            MallctlError.TryAgain => "a transient failure; try again (EAGAIN)",
            MallctlError.OutOfMemory => "out of memory (ENOMEM)",
            MallctlError.Fault => "the operation behind the key failed (EFAULT)",
            _ => $"error {(int)error}",
        };
        return $"mallctl '{name}' failed: {meaning}." + (detail is null ? string.Empty : " " + detail);
    }
}
