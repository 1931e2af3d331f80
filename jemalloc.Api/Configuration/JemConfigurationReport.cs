namespace jemalloc;

/// <summary>
/// Which options of a <c>malloc_conf</c> string jemalloc applied, from
/// <see cref="Jem.GetConfigurationReport()"/> or <see cref="Jem.CheckConfiguration(string)"/>.
/// </summary>
public sealed class JemConfigurationReport
{
    internal JemConfigurationReport(string configuration, IReadOnlyList<JemOptionCheck> options)
    {
        Configuration = configuration;
        Options = options;
    }

    /// <summary>The configuration string checked (empty when none was given).</summary>
    public string Configuration { get; }

    /// <summary>Every option of the string, in order.</summary>
    public IReadOnlyList<JemOptionCheck> Options { get; }

    /// <summary>The options jemalloc did not apply.</summary>
    public IEnumerable<JemOptionCheck> Rejected => Options.Where(option => option.Status == JemOptionStatus.Rejected);

    /// <summary>Whether no option was rejected (options that cannot be checked do not count).</summary>
    public bool NoneRejected => !Rejected.Any();

    /// <inheritdoc/>
    public override string ToString() =>
        Options.Count == 0 ? "No jemalloc options were given." : string.Join(Environment.NewLine, Options);
}
