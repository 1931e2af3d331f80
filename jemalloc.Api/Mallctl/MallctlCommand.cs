using jemalloc.Mallctl;

namespace jemalloc;

/// <summary>A mallctl key that is an action taking and returning nothing, such as <c>thread.tcache.flush</c>.</summary>
/// <param name="Name">The key.</param>
public readonly record struct MallctlCommand(string Name)
{
    /// <summary>Runs the command.</summary>
    /// <exception cref="MallctlException">The key does not exist, is not a command, the action failed, or it is refused (see <see cref="Jem.MallctlCommand(string)"/>).</exception>
    public void Run() => MallctlClient.Run(Name);

    /// <inheritdoc/>
    public override string ToString() => Name;
}
