using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using jemalloc.Columns;
using jemalloc.Internal;

namespace jemalloc;

/// <summary>
/// An open read of a <see cref="NativeStringColumn"/> (<see cref="NativeStringColumn.OpenRead"/>): while it
/// is open the column's arrays cannot be freed, and <see cref="this[long]"/> gives each row's bytes without
/// a copy. Use it as <c>using var values = column.OpenRead();</c>.
/// </summary>
/// <remarks>
/// The spans it gives are bound to the variable that holds the scope: the compiler refuses to let them
/// outlive it. Disposing closes the scope once, through this or any copy; its members throw
/// <see cref="ObjectDisposedException"/> afterwards.
/// </remarks>
public unsafe ref struct NativeStringColumnReadScope : IVariableLengthRows
{
    private const string TypeName = nameof(NativeStringColumnReadScope);

    private readonly MemoryLease<long> _offsetLease;
    private readonly MemoryLease<byte> _dataLease;
    private readonly MemoryLease<byte> _validityLease;
    private readonly long* _offsets;
    private readonly byte* _data;
    private readonly byte* _bits;
    private readonly long _dataLength;
    private readonly long _length;

    internal NativeStringColumnReadScope(NativeStringColumn column)
    {
        _offsetLease = column.Offsets.Lease();
        try
        {
            _dataLease = column.Data.Lease();
            try
            {
                _validityLease = column.Validity is null ? default : column.Validity.Lease();
            }
            catch
            {
                _dataLease.Dispose();
                throw;
            }
        }
        catch
        {
            _offsetLease.Dispose();
            throw;
        }

        _offsets = (long*)_offsetLease.Pointer;
        _data = (byte*)_dataLease.Pointer;
        _bits = column.Validity is null ? null : (byte*)_validityLease.Pointer;
        _dataLength = _dataLease.Length;
        _length = column.Length;
    }

    /// <summary>The number of rows.</summary>
    public readonly long Length => _length;

    /// <summary>
    /// Row <paramref name="row"/>'s bytes, valid while the scope is open. A null row's value is whatever
    /// its offsets span (empty when the column was built by this library); check <see cref="IsNull"/>.
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="row"/> is negative or not less than <see cref="Length"/>.</exception>
    /// <exception cref="InvalidDataException">The row's offsets do not describe bytes inside the data block (they were changed after the column was made).</exception>
    /// <exception cref="ObjectDisposedException">The scope was disposed.</exception>
    [UnscopedRef]
    public readonly ReadOnlySpan<byte> this[long row]
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get
        {
            if ((ulong)row >= (ulong)_length)
            {
                ThrowRow(row, _length);
            }

            ThrowIfClosed();
            long start = _offsets[row];
            long end = _offsets[row + 1];
            if ((ulong)start > (ulong)end || (ulong)end > (ulong)_dataLength || end - start > int.MaxValue)
            {
                ThrowBadOffsets(row, start, end, _dataLength);
            }

            return new ReadOnlySpan<byte>(_data + start, (int)(end - start));
        }
    }

    /// <summary>Whether row <paramref name="row"/> is null.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="row"/> is negative or not less than <see cref="Length"/>.</exception>
    /// <exception cref="ObjectDisposedException">The scope was disposed.</exception>
    public readonly bool IsNull(long row)
    {
        if ((ulong)row >= (ulong)_length)
        {
            ThrowRow(row, _length);
        }

        ThrowIfClosed();
        return _bits != null && ((_bits[row >> 3] >> (int)(row & 7)) & 1) == 0;
    }

    /// <summary>Closes the scope; later calls, through this or any copy, do nothing.</summary>
    public readonly void Dispose()
    {
        _validityLease.Dispose();
        _dataLease.Dispose();
        _offsetLease.Dispose();
    }

    // Whole-column loops read the arrays directly, after one check here: the scope is open and stays
    // open for the loop (only this scope's Dispose, on this stack, can close it).
    internal readonly long* OffsetPointer => _offsets;

    internal readonly byte* DataPointer => _data;

    internal readonly byte* ValidityPointer => _bits;

    internal readonly long DataLength => _dataLength;

    internal readonly void ThrowIfClosed()
    {
        if (!_offsetLease.IsOpen)
        {
            // Only Dispose closes a scope: its leases keep the column's arrays from being freed. (A
            // default scope never gets here: it has no rows, so the range checks throw first.)
            ThrowHelper.ThrowEnded(TypeName, "open a new one with NativeStringColumn.OpenRead()");
        }
    }

    private static void ThrowRow(long row, long length) =>
        ThrowHelper.ThrowArgumentOutOfRange(nameof(row), row, $"The column has {length:N0} rows.");

    private static void ThrowBadOffsets(long row, long start, long end, long dataLength) =>
        throw new InvalidDataException(ColumnChecks.DescribeBadOffsets(row, start, end, dataLength) + " The column's offsets were changed after it was made.");
}
