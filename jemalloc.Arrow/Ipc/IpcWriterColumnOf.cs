using System.Buffers.Binary;
using jemalloc.AddOns;

namespace jemalloc.Arrow.Ipc;

/// <summary>
/// A fixed-width or boolean column written from a native array: values go to the stream straight
/// from the array; booleans are packed into bits (and, for a test's big-endian output, values are
/// swapped) a scratch block at a time.
/// </summary>
internal sealed unsafe class IpcWriterColumnOf<T>(string name, IpcType type, NativeBuffer<T> values, long length, NativeBuffer<byte>? validity)
    : IpcWriterColumn(name, type, length, validity)
    where T : unmanaged, IEquatable<T>
{
    internal override void Hold(List<MemoryHold> holds)
    {
        holds.Add(values.Hold());
        base.Hold(holds);
    }

    // A Decimal128 value with more digits than the column's precision would make a file that other
    // readers (and ours) refuse or misread: refused before a byte is written, as the Parquet writer does.
    internal override void CheckBatches(long batchSize)
    {
        if (Type.Code != IpcTypeCode.Decimal || typeof(T) != typeof(Int128))
        {
            return;
        }

        using MemoryLease<T> valueLease = values.Lease();
        using MemoryLease<byte> validityLease = Validity is null ? default : Validity.Lease();
        var at = (Int128*)valueLease.Pointer;
        long row = DecimalDigits.FirstPastPrecision(at, Validity is null ? null : (byte*)validityLease.Pointer, Length, Type.Precision);
        if (row >= 0)
        {
            IpcThrow.InvalidOperation($"Column '{Name}' holds {at[row]} (unscaled) at row {row:N0}, more digits than its precision of {Type.Precision} (scale {Type.Scale}); nothing was written.");
        }
    }

    internal override void ValueBufferLengths(long start, long count, Span<long> lengths) =>
        lengths[0] = typeof(T) == typeof(bool) ? (count + 7) >> 3 : count * sizeof(T);

    internal override void WriteValues(IpcOutput output, long start, long count, byte* scratch, int scratchBytes, bool bigEndian)
    {
        using MemoryLease<T> lease = values.Lease();
        T* source = (T*)lease.Pointer + start;
        if (typeof(T) == typeof(bool))
        {
            WriteBits((bool*)source, count, output, scratch, scratchBytes);
        }
        else if (bigEndian && sizeof(T) > 1)
        {
            WriteSwapped(source, count, output, scratch, scratchBytes);
        }
        else
        {
            output.WriteNative((byte*)source, count * sizeof(T));
        }

        output.Pad();
    }

    private static void WriteBits(bool* source, long count, IpcOutput output, byte* scratch, int scratchBytes)
    {
        for (long done = 0; done < count;)
        {
            long rows = Math.Min(count - done, (long)scratchBytes * 8);
            int bytes = (int)((rows + 7) >> 3);
            new Span<byte>(scratch, bytes).Clear();
            for (long i = 0; i < rows; i++)
            {
                if (source[done + i])
                {
                    scratch[i >> 3] |= (byte)(1 << (int)(i & 7));
                }
            }

            output.Write(new ReadOnlySpan<byte>(scratch, bytes));
            done += rows;
        }
    }

    private static void WriteSwapped(T* source, long count, IpcOutput output, byte* scratch, int scratchBytes)
    {
        int perChunk = scratchBytes / sizeof(T);
        for (long done = 0; done < count;)
        {
            int rows = (int)Math.Min(count - done, perChunk);
            var from = new ReadOnlySpan<byte>(source + done, rows * sizeof(T));
            var to = new Span<byte>(scratch, rows * sizeof(T));
            switch (sizeof(T))
            {
                case 2:
                    BinaryPrimitives.ReverseEndianness(System.Runtime.InteropServices.MemoryMarshal.Cast<byte, ushort>(from), System.Runtime.InteropServices.MemoryMarshal.Cast<byte, ushort>(to));
                    break;
                case 4:
                    BinaryPrimitives.ReverseEndianness(System.Runtime.InteropServices.MemoryMarshal.Cast<byte, uint>(from), System.Runtime.InteropServices.MemoryMarshal.Cast<byte, uint>(to));
                    break;
                case 16:
                    // Decimal128: each value is one 16-byte integer, reversed as a whole.
                    BinaryPrimitives.ReverseEndianness(System.Runtime.InteropServices.MemoryMarshal.Cast<byte, UInt128>(from), System.Runtime.InteropServices.MemoryMarshal.Cast<byte, UInt128>(to));
                    break;
                default:
                    BinaryPrimitives.ReverseEndianness(System.Runtime.InteropServices.MemoryMarshal.Cast<byte, ulong>(from), System.Runtime.InteropServices.MemoryMarshal.Cast<byte, ulong>(to));
                    break;
            }

            output.Write(to);
            done += rows;
        }
    }
}
