namespace jemalloc;

/// <summary>A mallctl key that is an action taking and returning nothing, such as <c>thread.tcache.flush</c>.</summary>
/// <param name="Name">The key.</param>
public readonly record struct MallctlCommand(string Name)
{
    /// <summary>Runs the command.</summary>
    /// <exception cref="MallctlException">The key does not exist or the action failed.</exception>
    public void Run() => Jem.MallctlCommand(Name);

    /// <inheritdoc/>
    public override string ToString() => Name;
}
