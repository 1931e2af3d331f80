using jemalloc.AddOns;
using ParquetSharp;
using ParquetSharp.Schema;

namespace jemalloc.Parquet.Internal;

/// <summary>
/// A DECIMAL column written from a <see cref="DecimalColumn"/>, in the physical type the specification
/// recommends for its precision: INT32 up to 9 digits, INT64 up to 18, FIXED_LEN_BYTE_ARRAY of the fewest
/// bytes that hold the precision beyond (big-endian two's complement). Each valid row's value is checked
/// against the precision on the way, as a reader trusts it.
/// </summary>
internal sealed unsafe class DecimalWriterColumn(string name, DecimalColumn column)
    : WriterColumn(name, column.Length)
{
    private readonly PhysicalType _physical = DecimalEncoding.PhysicalFor(column.Precision);
    private readonly int _width = DecimalEncoding.BytesFor(column.Precision);
    private readonly Int128 _limit = DecimalEncoding.PowerOfTen(column.Precision);

    internal override Node CreateNode()
    {
        using LogicalType logical = LogicalType.Decimal(column.Precision, column.Scale);
        return new PrimitiveNode(
            Name,
            column.Validity is null ? Repetition.Required : Repetition.Optional,
            logical,
            _physical,
            _physical == PhysicalType.FixedLenByteArray ? _width : -1);
    }

    internal override void Hold(List<MemoryHold> holds)
    {
        holds.Add(column.Values.Hold());
        if (column.Validity is not null)
        {
            holds.Add(column.Validity.Hold());
        }
    }

    internal override void Write(ColumnWriter writer, long start, long count, AllocationOptions scratchOptions)
    {
        int chunk = (int)Math.Min(ChunkRows, count);
        bool fixedWidth = _physical == PhysicalType.FixedLenByteArray;
        using var valueBlock = LeasedBlock<Int128>.Of(column.Values);
        using var validityBlock = LeasedBlock<byte>.Of(column.Validity);
        // INT32 and INT64 values, or the big-endian bytes and the pointers to them.
        using var encodedBlock = LeasedBlock<byte>.Scratch(true, chunk * (fixedWidth ? _width : _physical == PhysicalType.Int32 ? sizeof(int) : sizeof(long)), scratchOptions);
        using var pointerBlock = LeasedBlock<nint>.Scratch(fixedWidth, chunk, scratchOptions);
        using var levelBlock = LeasedBlock<short>.Scratch(column.Validity is not null, chunk * 2, scratchOptions);
        Int128* source = valueBlock.Pointer;
        byte* bits = validityBlock.Pointer;
        byte* encoded = encodedBlock.Pointer;
        short* levels = levelBlock.Pointer;
        for (long done = 0; done < count;)
        {
            int batch = (int)Math.Min(count - done, chunk);
            long row = start + done;
            for (int i = 0; i < batch; i++)
            {
                Int128 value = source[row + i];
                if (bits != null && !ValidityBitmap.IsSet(bits, row + i))
                {
                    // A null row's slot is skipped by the spaced write; its element may hold anything.
                    value = Int128.Zero;
                }
                else if (value >= _limit || value <= -_limit)
                {
                    ThrowPastPrecision(row + i);
                }

                switch (_physical)
                {
                    case PhysicalType.Int32:
                        ((int*)encoded)[i] = (int)value;
                        break;
                    case PhysicalType.Int64:
                        ((long*)encoded)[i] = (long)value;
                        break;
                    default:
                        DecimalEncoding.Encode(value, encoded + ((long)i * _width), _width);
                        break;
                }
            }

            switch (_physical)
            {
                case PhysicalType.Int32:
                    BatchWriter.Write((ColumnWriter<int>)writer, new ReadOnlySpan<int>(encoded, batch), bits, levels, chunk, row, batch);
                    break;
                case PhysicalType.Int64:
                    BatchWriter.Write((ColumnWriter<long>)writer, new ReadOnlySpan<long>(encoded, batch), bits, levels, chunk, row, batch);
                    break;
                default:
                    var pointers = (FixedLenByteArray*)pointerBlock.Pointer;
                    for (int i = 0; i < batch; i++)
                    {
                        pointers[i] = new FixedLenByteArray((nint)(encoded + ((long)i * _width)));
                    }

                    BatchWriter.Write((ColumnWriter<FixedLenByteArray>)writer, new ReadOnlySpan<FixedLenByteArray>(pointers, batch), bits, levels, chunk, row, batch);
                    break;
            }

            done += batch;
        }
    }

    private void ThrowPastPrecision(long row) =>
        ParquetThrow.InvalidOperation($"Column '{Name}' holds {column.ToString(row)} at row {row:N0}, more digits than its precision of {column.Precision} (scale {column.Scale}); nothing was written to the path.");
}
