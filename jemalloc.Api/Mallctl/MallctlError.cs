namespace jemalloc;

/// <summary>The error numbers <c>mallctl</c> returns, named.</summary>
public enum MallctlError
{
    /// <summary>No error.</summary>
    None = 0,

    /// <summary><c>EPERM</c>: the key cannot be written (it is read-only), or the operation is not permitted.</summary>
    NotPermitted = 1,

    /// <summary><c>ENOENT</c>: no such key, or the feature behind it was not built into jemalloc.</summary>
    NotFound = 2,

    /// <summary><c>EAGAIN</c>: a transient failure, e.g. no memory for the operation right now.</summary>
    TryAgain = 11,

    /// <summary><c>ENOMEM</c>: out of memory.</summary>
    OutOfMemory = 12,

    /// <summary><c>EFAULT</c>: an interface fault, e.g. a failed native operation behind the key.</summary>
    Fault = 14,

    /// <summary><c>EINVAL</c>: the value's size does not match the key's type, or the value is not allowed.</summary>
    InvalidValue = 22,
}
