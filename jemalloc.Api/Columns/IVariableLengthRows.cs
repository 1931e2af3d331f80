using System.Diagnostics.CodeAnalysis;

namespace jemalloc.Columns;

/// <summary>
/// An open read of a column of variable-length values, plain or dictionary-encoded: what
/// <see cref="VariableLengthRows"/> needs to give both columns' per-row members one meaning.
/// </summary>
internal interface IVariableLengthRows
{
    /// <summary>Whether the row is null (checks the row and that the read is open).</summary>
    bool IsNull(long row);

    /// <summary>The row's bytes, bound to the read's variable as the implementations' indexers are.</summary>
    [UnscopedRef]
    ReadOnlySpan<byte> this[long row] { get; }
}
