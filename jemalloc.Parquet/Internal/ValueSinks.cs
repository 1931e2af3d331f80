using ParquetSharp;

namespace jemalloc.Parquet.Internal;

/// <summary>Where the flat-type read puts each decoded value: a struct per conversion, so the read loop is specialised for each and calls nothing virtual.</summary>
/// <typeparam name="TPhysical">The values ParquetSharp decodes: int, long, FixedLenByteArray or ByteArray.</typeparam>
internal interface IValueSink<TPhysical>
    where TPhysical : unmanaged
{
    /// <summary>Stores row <paramref name="row"/>'s value.</summary>
    /// <exception cref="InvalidDataException">The value is not one the column can hold.</exception>
    void Put(long row, TPhysical value);

    /// <summary>Clears a null row's element, so the block holds no stale bytes there.</summary>
    void PutNull(long row);
}

/// <summary>An INT32 DECIMAL's values, widened into the column's Int128 block.</summary>
internal readonly unsafe struct Int32DecimalSink(Int128* destination) : IValueSink<int>
{
    public void Put(long row, int value) => destination[row] = value;

    public void PutNull(long row) => destination[row] = default;
}

/// <summary>An INT64 DECIMAL's values, widened into the column's Int128 block.</summary>
internal readonly unsafe struct Int64DecimalSink(Int128* destination) : IValueSink<long>
{
    public void Put(long row, long value) => destination[row] = value;

    public void PutNull(long row) => destination[row] = default;
}

/// <summary>A FIXED_LEN_BYTE_ARRAY DECIMAL's big-endian values, decoded into the column's Int128 block.</summary>
internal readonly unsafe struct FixedDecimalSink(Int128* destination, int width, string column) : IValueSink<FixedLenByteArray>
{
    public void Put(long row, FixedLenByteArray value)
    {
        if (!DecimalEncoding.TryDecode((byte*)value.Pointer, width, out destination[row]))
        {
            ThrowTooWide(column, row, width);
        }
    }

    public void PutNull(long row) => destination[row] = default;

    internal static void ThrowTooWide(string column, long row, int width) =>
        ParquetThrow.InvalidData($"Column '{column}' holds a {width}-byte decimal at row {row:N0} that does not fit in 128 bits (decimal128, 38 digits).");
}

/// <summary>A BYTE_ARRAY DECIMAL's big-endian values, each of its own length, decoded into the column's Int128 block.</summary>
internal readonly unsafe struct VariableDecimalSink(Int128* destination, string column) : IValueSink<ByteArray>
{
    public void Put(long row, ByteArray value)
    {
        if (value.Length == 0)
        {
            ParquetThrow.InvalidData($"Column '{column}' holds an empty BYTE_ARRAY decimal at row {row:N0}; a decimal takes at least one byte.");
        }

        if (!DecimalEncoding.TryDecode((byte*)value.Pointer, value.Length, out destination[row]))
        {
            FixedDecimalSink.ThrowTooWide(column, row, value.Length);
        }
    }

    public void PutNull(long row) => destination[row] = default;
}

/// <summary>FIXED_LEN_BYTE_ARRAY values copied as they are into a block of <paramref name="width"/> bytes a row (fixed-size binary, FLOAT16).</summary>
internal readonly unsafe struct FixedBytesSink(byte* destination, int width) : IValueSink<FixedLenByteArray>
{
    public void Put(long row, FixedLenByteArray value) =>
        Buffer.MemoryCopy((void*)value.Pointer, destination + (row * width), width, width);

    public void PutNull(long row) => new Span<byte>(destination + (row * width), width).Clear();
}
