namespace jemalloc.Arrow.Ipc;

/// <summary>
/// A <see cref="FixedSizeBinaryColumn"/> written as FixedSizeBinary: each batch's values are one run of
/// the data block, written from it as they are (bytes have no byte order).
/// </summary>
internal sealed unsafe class IpcFixedSizeBinaryWriterColumn(string name, FixedSizeBinaryColumn column)
    : IpcWriterColumn(name, IpcType.FixedSizeBinary(column.ByteWidth), column.Length, column.Validity)
{
    internal override void Hold(List<MemoryHold> holds)
    {
        holds.Add(column.Data.Hold());
        base.Hold(holds);
    }

    internal override void ValueBufferLengths(long start, long count, Span<long> lengths) =>
        lengths[0] = count * column.ByteWidth;

    internal override void WriteValues(IpcOutput output, long start, long count, byte* scratch, int scratchBytes, bool bigEndian)
    {
        using MemoryLease<byte> lease = column.Data.Lease();
        output.WriteNative((byte*)lease.Pointer + (start * column.ByteWidth), count * column.ByteWidth);
        output.Pad();
    }
}
