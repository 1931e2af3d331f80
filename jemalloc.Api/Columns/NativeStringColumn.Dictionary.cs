namespace jemalloc;

// Dictionary-encoding a plain column: each row's bytes are hashed into a table of the distinct values.
public sealed partial class NativeStringColumn
{
    /// <summary>
    /// Dictionary-encodes the column: a new <see cref="NativeDictionaryColumn"/> whose dictionary holds each
    /// distinct value once (in the order first seen, found by hashing the bytes) and whose rows hold their
    /// value's index, with the same nulls; allocated as the library chooses. This column is unchanged.
    /// </summary>
    /// <returns>A new column, which the caller owns.</returns>
    /// <exception cref="InvalidOperationException">The column has more than 2^30 distinct values.</exception>
    /// <exception cref="InvalidDataException">A row's offsets do not describe bytes inside <see cref="Data"/>.</exception>
    /// <exception cref="OutOfMemoryException">The new column cannot be allocated; nothing is left allocated.</exception>
    /// <exception cref="ObjectDisposedException">The column was disposed.</exception>
    public NativeDictionaryColumn ToDictionaryColumn() => Encode(null);

    /// <summary>Dictionary-encodes the column into blocks allocated with <paramref name="options"/>.</summary>
    /// <param name="options">How the new column's blocks are allocated.</param>
    /// <inheritdoc cref="ToDictionaryColumn()"/>
    public NativeDictionaryColumn ToDictionaryColumn(AllocationOptions options) => Encode(options);

    private NativeDictionaryColumn Encode(AllocationOptions? options)
    {
        using NativeStringColumnReadScope values = OpenRead();
        using NativeDictionaryColumnBuilder builder = options is { } o ? new NativeDictionaryColumnBuilder(IsUtf8, o) : new NativeDictionaryColumnBuilder(IsUtf8);
        for (long row = 0; row < Length; row++)
        {
            if (values.IsNull(row))
            {
                builder.AppendNull();
            }
            else
            {
                builder.Append(values[row]);
            }
        }

        return builder.Build();
    }
}
