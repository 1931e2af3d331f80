using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using jemalloc.Columns;
using jemalloc.Internal;

namespace jemalloc;

/// <summary>
/// An open read of a <see cref="NativeDictionaryColumn"/> (<see cref="NativeDictionaryColumn.OpenRead"/>):
/// while it is open the column's arrays cannot be freed, and <see cref="this[long]"/> gives each row's bytes
/// without a copy. Use it as <c>using var values = column.OpenRead();</c>.
/// </summary>
/// <remarks>
/// The spans it gives are bound to the variable that holds the scope: the compiler refuses to let them
/// outlive it. Disposing closes the scope once, through this or any copy; its members throw
/// <see cref="ObjectDisposedException"/> afterwards.
/// </remarks>
public unsafe ref struct NativeDictionaryColumnReadScope : IVariableLengthRows
{
    private const string TypeName = nameof(NativeDictionaryColumnReadScope);

    private readonly MemoryLease<int> _indexLease;
    private readonly MemoryLease<byte> _validityLease;
    private readonly NativeStringColumnReadScope _values;
    private readonly int* _indices;
    private readonly byte* _bits;
    private readonly long _length;
    private readonly uint _dictionaryLength;

    internal NativeDictionaryColumnReadScope(NativeDictionaryColumn column)
    {
        _indexLease = column.Indices.Lease();
        try
        {
            _validityLease = column.Validity is null ? default : column.Validity.Lease();
            try
            {
                _values = column.Dictionary.OpenRead();
            }
            catch
            {
                _validityLease.Dispose();
                throw;
            }
        }
        catch
        {
            _indexLease.Dispose();
            throw;
        }

        _indices = (int*)_indexLease.Pointer;
        _bits = column.Validity is null ? null : (byte*)_validityLease.Pointer;
        _length = column.Length;
        _dictionaryLength = (uint)column.Dictionary.Length;
    }

    /// <summary>The number of rows.</summary>
    public readonly long Length => _length;

    /// <summary>The number of values in the dictionary.</summary>
    public readonly int DictionaryLength => (int)_dictionaryLength;

    /// <summary>
    /// Row <paramref name="row"/>'s bytes, valid while the scope is open. A null row's value is that of
    /// the dictionary value its index names, or empty when the index names none; check <see cref="IsNull"/>.
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="row"/> is negative or not less than <see cref="Length"/>.</exception>
    /// <exception cref="InvalidDataException">The row is not null and its index is not one of the dictionary's (it was changed after the column was made).</exception>
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
            int index = _indices[row];
            if ((uint)index >= _dictionaryLength)
            {
                if (IsNullUnchecked(row))
                {
                    return default;
                }

                ThrowBadIndex(row, index, _dictionaryLength);
            }

            return _values[index];
        }
    }

    /// <summary>The dictionary's value <paramref name="index"/>, valid while the scope is open.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="index"/> is negative or not less than <see cref="DictionaryLength"/>.</exception>
    /// <exception cref="InvalidDataException">The dictionary's offsets were changed after it was made and do not describe the value.</exception>
    /// <exception cref="ObjectDisposedException">The scope was disposed.</exception>
    [UnscopedRef]
    public readonly ReadOnlySpan<byte> GetDictionaryValue(int index)
    {
        if ((uint)index >= _dictionaryLength)
        {
            ThrowHelper.ThrowArgumentOutOfRange(nameof(index), index, $"The dictionary has {_dictionaryLength:N0} values.");
        }

        ThrowIfClosed();
        return _values[index];
    }

    /// <summary>Row <paramref name="row"/>'s index in the dictionary, or -1 for a null row.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="row"/> is negative or not less than <see cref="Length"/>.</exception>
    /// <exception cref="InvalidDataException">The row's index is not one of the dictionary's.</exception>
    /// <exception cref="ObjectDisposedException">The scope was disposed.</exception>
    public readonly int GetIndex(long row)
    {
        if ((ulong)row >= (ulong)_length)
        {
            ThrowRow(row, _length);
        }

        ThrowIfClosed();
        if (IsNullUnchecked(row))
        {
            return -1;
        }

        int index = _indices[row];
        if ((uint)index >= _dictionaryLength)
        {
            ThrowBadIndex(row, index, _dictionaryLength);
        }

        return index;
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
        return IsNullUnchecked(row);
    }

    /// <summary>Closes the scope; later calls, through this or any copy, do nothing.</summary>
    public readonly void Dispose()
    {
        _values.Dispose();
        _validityLease.Dispose();
        _indexLease.Dispose();
    }

    // Whole-column loops read the arrays directly, after one check here: the scope is open and stays
    // open for the loop (only this scope's Dispose, on this stack, can close it).
    internal readonly int* IndexPointer => _indices;

    internal readonly byte* ValidityPointer => _bits;

    internal readonly void ThrowIfClosed()
    {
        if (!_indexLease.IsOpen)
        {
            // Only Dispose closes a scope: its leases keep the column's arrays from being freed. (A
            // default scope never gets here: it has no rows, so the range checks throw first.)
            ThrowHelper.ThrowEnded(TypeName, "open a new one with NativeDictionaryColumn.OpenRead()");
        }
    }

    [DoesNotReturn]
    internal static void ThrowBadIndex(long row, int index, uint dictionaryLength) =>
        throw new InvalidDataException($"Row {row:N0}'s index is {index:N0}; the dictionary has {dictionaryLength:N0} values. The column's indices were changed after it was made.");

    private readonly bool IsNullUnchecked(long row) => _bits != null && ((_bits[row >> 3] >> (int)(row & 7)) & 1) == 0;

    private static void ThrowRow(long row, long length) =>
        ThrowHelper.ThrowArgumentOutOfRange(nameof(row), row, $"The column has {length:N0} rows.");
}
