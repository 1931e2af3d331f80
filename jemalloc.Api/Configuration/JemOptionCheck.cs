namespace jemalloc;

/// <summary>One option of a <c>malloc_conf</c> string compared with what jemalloc uses.</summary>
/// <param name="Key">The option's key, e.g. <c>narenas</c>.</param>
/// <param name="RequestedValue">The value asked for.</param>
/// <param name="EffectiveValue">The value jemalloc uses (<c>opt.&lt;key&gt;</c>), or <see langword="null"/> when it cannot be read.</param>
/// <param name="Status">Whether the option was applied.</param>
/// <param name="Reason">Why it was rejected or cannot be checked; empty when applied.</param>
public readonly record struct JemOptionCheck(
    string Key,
    string RequestedValue,
    string? EffectiveValue,
    JemOptionStatus Status,
    string Reason)
{
    /// <inheritdoc/>
    public override string ToString() =>
        $"{Key}:{RequestedValue} -> {Status}" + (EffectiveValue is null ? string.Empty : $" (effective {EffectiveValue})") +
        (Reason.Length == 0 ? string.Empty : $": {Reason}");
}
