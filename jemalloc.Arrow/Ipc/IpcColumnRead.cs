using System.Buffers.Binary;
using jemalloc.AddOns;

namespace jemalloc.Arrow.Ipc;

/// <summary>
/// Reads one fixed-width or boolean column of every batch into native memory: each batch's buffers
/// are located and checked against its body, then read from the stream straight into the
/// destination block (values) or through a small native scratch block (bits), and byte-swapped in
/// place when the schema says the data are big-endian.
/// </summary>
internal unsafe ref struct IpcColumnRead
{
    private const int ScratchBytes = 64 * 1024;

    private readonly Stream _stream;
    private readonly IpcIndex _index;
    private readonly int _column;
    private readonly string _name;

    internal IpcColumnRead(Stream stream, IpcIndex index, int column)
    {
        _stream = stream;
        _index = index;
        _column = column;
        _name = index.Fields[column].Name;
    }

    /// <summary>Checks every batch's node and buffers for the column; returns the rows and the nulls of all batches.</summary>
    /// <exception cref="NotSupportedException">A batch is compressed, or a column before this one has a type whose buffers cannot be counted.</exception>
    /// <exception cref="InvalidDataException">A node or buffer does not fit its batch or body.</exception>
    internal readonly (long Rows, long Nulls) Check(int valueBuffers, long elementBits)
    {
        long rows = 0, nulls = 0;
        foreach (IpcBatch batch in _index.Batches)
        {
            if (batch.Codec is not null)
            {
                IpcThrow.NotSupported($"Column '{_name}' cannot be read: record batch {batch.Index}'s body is compressed ({batch.Codec}), and the reader reads uncompressed Arrow IPC.");
            }

            (int node, int buffer) = Locate(batch);
            long length = batch.Nodes[2 * node];
            long nullCount = batch.Nodes[(2 * node) + 1];
            if (length != batch.Length || nullCount < 0 || nullCount > length)
            {
                IpcThrow.InvalidData($"Record batch {batch.Index} has {batch.Length:N0} rows, but its node for column '{_name}' declares {length:N0} values and {nullCount:N0} nulls.");
            }

            if (nullCount > 0)
            {
                CheckBuffer(batch, buffer, ValidityBitmap.BytesFor(length), "validity bitmap");
            }

            if (valueBuffers > 0)
            {
                // Strings: the offsets (one more than the rows, when there are rows); the data is checked against them.
                long units = valueBuffers == 2 ? (length == 0 ? 0 : length + 1) : length;
                long needed = elementBits == 1 ? ValidityBitmap.BytesFor(units) : units > long.MaxValue / (elementBits / 8) ? long.MaxValue : units * (elementBits / 8);
                CheckBuffer(batch, buffer + 1, needed, valueBuffers == 2 ? "offsets buffer" : "value buffer");
            }

            rows += length;
            nulls += nullCount;
        }

        return (rows, nulls);
    }

    /// <summary>The column's first node and buffer in <paramref name="batch"/>, after every column before it.</summary>
    internal readonly (int Node, int Buffer) Locate(IpcBatch batch)
    {
        long node = 0, buffer = 0;
        int view = 0;
        for (int c = 0; c < _column; c++)
        {
            IpcLayout layout = _index.Fields[c].Layout;
            if (!layout.Known)
            {
                IpcThrow.NotSupported($"Column '{_name}' cannot be located: column '{_index.Fields[c].Name}' before it is of a type this reader does not know ({_index.Fields[c].TypeName}), so its buffers cannot be counted.");
            }

            node += layout.Nodes;
            buffer += layout.Buffers;
            for (int v = 0; v < layout.Views; v++, view++)
            {
                long extra = view < batch.VariadicCounts.Length ? batch.VariadicCounts[view] : -1;
                if (extra < 0 || extra > batch.BufferCount)
                {
                    IpcThrow.InvalidData($"Record batch {batch.Index} gives view column {view} {extra:N0} variadic buffers; it has {batch.BufferCount:N0} buffers.");
                }

                buffer += extra;
            }
        }

        IpcLayout own = _index.Fields[_column].Layout;
        if (node + own.Nodes > batch.NodeCount || buffer + own.Buffers > batch.BufferCount)
        {
            IpcThrow.InvalidData($"Record batch {batch.Index} has {batch.NodeCount:N0} nodes and {batch.BufferCount:N0} buffers, too few for the schema's columns up to '{_name}'.");
        }

        return ((int)node, (int)buffer);
    }

    /// <summary>Reads the validity bitmaps of every batch into <paramref name="bits"/> (zeroed, one bit a row), concatenated at each batch's first row; a batch without nulls marks its rows valid.</summary>
    internal readonly void ReadValidity(byte* bits, byte* scratch)
    {
        long row = 0;
        foreach (IpcBatch batch in _index.Batches)
        {
            (int node, int buffer) = Locate(batch);
            long length = batch.Length;
            if (batch.Nodes[(2 * node) + 1] == 0)
            {
                ValidityBitmap.SetRange(bits, row, length);
            }
            else
            {
                ReadBits(batch.BodyStart + batch.Buffers[2 * buffer], length, bits, row, null, scratch);
            }

            row += length;
        }
    }

    /// <summary>Reads the values of every batch into <paramref name="destination"/>, each batch after the one before.</summary>
    internal readonly void ReadValues<T>(T* destination, byte* scratch)
        where T : unmanaged
    {
        long row = 0;
        foreach (IpcBatch batch in _index.Batches)
        {
            (_, int buffer) = Locate(batch);
            long position = batch.BodyStart + batch.Buffers[2 * (buffer + 1)];
            if (typeof(T) == typeof(bool))
            {
                ReadBits(position, batch.Length, null, row, (bool*)destination, scratch);
            }
            else
            {
                ReadBytes(position, (byte*)(destination + row), batch.Length * sizeof(T));
                if (_index.BigEndian)
                {
                    Swap(destination + row, batch.Length);
                }
            }

            row += batch.Length;
        }
    }

    /// <summary>Reads the values of every batch, <paramref name="width"/> bytes a row, into <paramref name="destination"/>, each batch after the one before; bytes are never swapped.</summary>
    internal readonly void ReadFixedSize(byte* destination, long width)
    {
        long row = 0;
        foreach (IpcBatch batch in _index.Batches)
        {
            (_, int buffer) = Locate(batch);
            ReadBytes(batch.BodyStart + batch.Buffers[2 * (buffer + 1)], destination + (row * width), batch.Length * width);
            row += batch.Length;
        }
    }

    /// <summary>Whether the stream's byte order is big-endian.</summary>
    internal readonly bool BigEndian => _index.BigEndian;

    /// <summary>The column's name.</summary>
    internal readonly string Name => _name;

    /// <summary>The record batches.</summary>
    internal readonly List<IpcBatch> Batches => _index.Batches;

    /// <summary>Reads <paramref name="count"/> bytes at <paramref name="position"/> of the stream into <paramref name="destination"/>.</summary>
    internal readonly void ReadBytes(long position, byte* destination, long count)
    {
        _stream.Position = position;
        while (count > 0)
        {
            int chunk = (int)Math.Min(count, 1 << 30);
            _stream.ReadExactly(new Span<byte>(destination, chunk));
            destination += chunk;
            count -= chunk;
        }
    }

    // A batch's bitmap of `rows` bits, through the scratch block: ORed into `bits` from bit `row` on
    // (a batch's rows need not start on a byte), or spread into `bools`. Bits past the batch's last
    // row are cleared first, so they cannot mark the next batch's rows.
    private readonly void ReadBits(long position, long rows, byte* bits, long row, bool* bools, byte* scratch)
    {
        long bytes = ValidityBitmap.BytesFor(rows);
        int shift = (int)(row & 7);
        byte* target = bits + (row >> 3);
        for (long done = 0; done < bytes;)
        {
            int chunk = (int)Math.Min(ScratchBytes, bytes - done);
            ReadBytes(position + done, scratch, chunk);
            for (int i = 0; i < chunk; i++)
            {
                long sourceByte = done + i;
                int valid = (int)Math.Min(8, rows - (sourceByte << 3));
                int value = scratch[i] & ((1 << valid) - 1);
                if (bools != null)
                {
                    bool* to = bools + row + (sourceByte << 3);
                    for (int k = 0; k < valid; k++)
                    {
                        to[k] = ((value >> k) & 1) != 0;
                    }
                }
                else if (value != 0)
                {
                    target[sourceByte] |= (byte)(value << shift);
                    if (shift != 0 && (value >> (8 - shift)) != 0)
                    {
                        target[sourceByte + 1] |= (byte)(value >> (8 - shift));
                    }
                }
            }

            done += chunk;
        }
    }

    // Big-endian values to this machine's order, in place (Arrow's big-endian data is the same bytes reversed per value).
    private static void Swap<T>(T* values, long count)
        where T : unmanaged
    {
        for (long done = 0; done < count;)
        {
            int chunk = (int)Math.Min(count - done, 1 << 26);
            void* start = values + done;
            if (sizeof(T) == 2)
            {
                var span = new Span<ushort>(start, chunk);
                BinaryPrimitives.ReverseEndianness(span, span);
            }
            else if (sizeof(T) == 4)
            {
                var span = new Span<uint>(start, chunk);
                BinaryPrimitives.ReverseEndianness(span, span);
            }
            else if (sizeof(T) == 8)
            {
                var span = new Span<ulong>(start, chunk);
                BinaryPrimitives.ReverseEndianness(span, span);
            }
            else if (sizeof(T) == 16)
            {
                // Decimal128: one 16-byte integer, its bytes reversed as a whole (not two 8-byte halves).
                var span = new Span<UInt128>(start, chunk);
                BinaryPrimitives.ReverseEndianness(span, span);
            }

            done += chunk;
        }
    }

    /// <summary>Checks that buffer <paramref name="buffer"/> of the batch lies inside its body and holds at least <paramref name="needed"/> bytes.</summary>
    internal readonly void CheckBuffer(IpcBatch batch, int buffer, long needed, string what)
    {
        long offset = batch.Buffers[2 * buffer];
        long length = batch.Buffers[(2 * buffer) + 1];
        if (offset < 0 || length < 0 || offset > batch.BodyLength - length)
        {
            IpcThrow.InvalidData($"Record batch {batch.Index} places the {what} of column '{_name}' at bytes {offset:N0} to {offset + length:N0} of its body of {batch.BodyLength:N0} bytes.");
        }

        if (length < needed)
        {
            IpcThrow.InvalidData($"Record batch {batch.Index} declares {batch.Length:N0} rows, but the {what} of column '{_name}' holds {length:N0} bytes ({needed:N0} needed).");
        }
    }
}
