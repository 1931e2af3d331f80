using jemalloc.Ledger;

namespace jemalloc;

/// <summary>
/// A fixed-length array of unmanaged structs in native memory allocated by jemalloc, freed by
/// <see cref="System.Runtime.InteropServices.SafeHandle.Dispose()"/> or, if leaked, by the finalizer.
/// </summary>
/// <typeparam name="T">Any unmanaged struct implementing <see cref="IEquatable{T}"/>.</typeparam>
/// <example>
/// <code>
/// using var employees = new SafeArray&lt;Employee&gt;(100);
/// employees[0] = new Employee { Id = 1, Name = new FixedUtf8String("Ada") };
/// ref Employee first = ref employees[0]; // an alias of the native element
/// </code>
/// </example>
public sealed class SafeArray<T> : SafeBuffer<T>
    where T : unmanaged, IEquatable<T>
{
    /// <summary>
    /// Allocates <paramref name="length"/> zero-filled elements with the default options: on
    /// transparent huge pages from <see cref="HugePagePolicy.ThresholdBytes"/> (2 MiB) up, where the
    /// kernel offers them.
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="length"/> is zero or negative.</exception>
    /// <exception cref="OutOfMemoryException">jemalloc could not allocate the memory.</exception>
    public SafeArray(int length)
        : base(length, options: null)
    {
    }

    /// <summary>Allocates <paramref name="length"/> zero-filled elements with the given options.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="length"/> is zero or negative.</exception>
    /// <exception cref="OutOfMemoryException">jemalloc could not allocate the memory.</exception>
    public SafeArray(int length, AllocationOptions options)
        : base(length, options)
    {
    }

    /// <summary>
    /// Allocates <paramref name="length"/> elements, each set to <paramref name="value"/>, with the
    /// default options. Faster than <c>new SafeArray&lt;T&gt;(length)</c> followed by <c>Fill</c>: the
    /// memory is written once, not cleared first (big arrays are written with streaming stores).
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="length"/> is zero or negative.</exception>
    /// <exception cref="OutOfMemoryException">jemalloc could not allocate the memory.</exception>
    public SafeArray(int length, T value)
        : base(length, value, options: null)
    {
    }

    /// <summary>Allocates <paramref name="length"/> elements, each set to <paramref name="value"/>, with the given options (written once, not cleared first).</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="length"/> is zero or negative.</exception>
    /// <exception cref="ArgumentException"><paramref name="options"/> name a thread cache, arena or alignment that cannot be used.</exception>
    /// <exception cref="OutOfMemoryException">jemalloc could not allocate the memory.</exception>
    public SafeArray(int length, T value, AllocationOptions options)
        : base(length, value, options)
    {
    }

    /// <summary>Allocates an array holding a copy of <paramref name="values"/>.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="values"/> is null.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="values"/> is empty.</exception>
    /// <exception cref="OutOfMemoryException">jemalloc could not allocate the memory.</exception>
    public SafeArray(T[] values)
        : this(new ReadOnlySpan<T>(values ?? throw new ArgumentNullException(nameof(values))))
    {
    }

    /// <summary>Allocates <paramref name="length"/> elements, cleared only if <paramref name="zero"/> is set (a pool's blocks need not be).</summary>
    internal SafeArray(int length, AllocationOptions options, bool zero)
        : base(length, options, zero)
    {
    }

    /// <summary>Takes over a block the ledger records (see <see cref="NativeBufferWriterExtensions.DetachToSafeArray{T}"/>).</summary>
    internal unsafe SafeArray(LedgerBlock adopted, T* pointer, int length)
        : base(adopted, pointer, length)
    {
    }

    /// <summary>Allocates an array holding a copy of <paramref name="values"/>.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="values"/> is empty.</exception>
    /// <exception cref="OutOfMemoryException">jemalloc could not allocate the memory.</exception>
    public SafeArray(ReadOnlySpan<T> values)
        : base(values.Length, options: null)
    {
        CopyFrom(values);
    }
}
