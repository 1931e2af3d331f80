using System.Text;
using jemalloc.Internal;

namespace jemalloc.Columns;

/// <summary>
/// The per-row members of <see cref="NativeStringColumn"/> and <see cref="NativeDictionaryColumn"/>, written
/// once over their read scopes: what a null row gives, how a value is copied, compared and decoded.
/// </summary>
/// <remarks>
/// The scopes are taken by value: a copy shares the original's leases (only <c>Dispose</c> ends them), and
/// the spans the copy gives cannot leave the method.
/// </remarks>
internal static class VariableLengthRows
{
    public static int GetByteCount<TRows>(TRows rows, long row)
        where TRows : IVariableLengthRows, allows ref struct =>
        rows.IsNull(row) ? 0 : rows[row].Length;

    public static string? GetString<TRows>(TRows rows, long row)
        where TRows : IVariableLengthRows, allows ref struct =>
        rows.IsNull(row) ? null : Encoding.UTF8.GetString(rows[row]);

    public static byte[]? GetBytes<TRows>(TRows rows, long row)
        where TRows : IVariableLengthRows, allows ref struct =>
        rows.IsNull(row) ? null : rows[row].ToArray();

    public static int CopyTo<TRows>(TRows rows, long row, Span<byte> destination)
        where TRows : IVariableLengthRows, allows ref struct
    {
        ReadOnlySpan<byte> value = rows.IsNull(row) ? default : rows[row];
        if (value.Length > destination.Length)
        {
            ThrowHelper.ThrowArgument(nameof(destination), $"Row {row:N0} holds {value.Length:N0} bytes; the destination has room for {destination.Length:N0}.");
        }

        value.CopyTo(destination);
        return value.Length;
    }

    public static bool ValueEquals<TRows>(TRows rows, long row, ReadOnlySpan<byte> value)
        where TRows : IVariableLengthRows, allows ref struct =>
        !rows.IsNull(row) && rows[row].SequenceEqual(value);

    public static bool StartsWith<TRows>(TRows rows, long row, ReadOnlySpan<byte> prefix)
        where TRows : IVariableLengthRows, allows ref struct =>
        !rows.IsNull(row) && rows[row].StartsWith(prefix);

    public static bool EndsWith<TRows>(TRows rows, long row, ReadOnlySpan<byte> suffix)
        where TRows : IVariableLengthRows, allows ref struct =>
        !rows.IsNull(row) && rows[row].EndsWith(suffix);

    public static bool Contains<TRows>(TRows rows, long row, ReadOnlySpan<byte> part)
        where TRows : IVariableLengthRows, allows ref struct =>
        !rows.IsNull(row) && rows[row].IndexOf(part) >= 0;

    /// <summary>Byte order; a null row sorts before every value.</summary>
    public static int CompareOrdinal<TRows>(TRows rows, long row, ReadOnlySpan<byte> value)
        where TRows : IVariableLengthRows, allows ref struct =>
        rows.IsNull(row) ? -1 : rows[row].SequenceCompareTo(value);

    /// <summary>Refuses a UTF-8 read of a binary column, in the words both columns use.</summary>
    public static void ThrowIfBinary(bool isUtf8)
    {
        if (!isUtf8)
        {
            ThrowHelper.ThrowInvalidOperation("The column holds binary values, not UTF-8 text: read them with GetBytes or OpenRead.");
        }
    }
}
