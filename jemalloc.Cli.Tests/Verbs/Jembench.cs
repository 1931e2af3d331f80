
namespace jemalloc.Cli.Tests.Verbs;

/// <summary>Runs jembench in this process and captures what it prints.</summary>
internal static class Jembench
{
    internal sealed record Result(int ExitCode, string Output, string Error)
    {
        public string All => Output + Error;
    }

    internal static Result Run(params string[] args)
    {
        using var output = new StringWriter();
        using var error = new StringWriter();
        int exitCode = Program.Run(args, output, error);
        return new Result(exitCode, output.ToString(), error.ToString());
    }
}
