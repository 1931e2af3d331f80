namespace jemalloc.Cli;

/// <summary>A command line that cannot be run: the message says what is wrong, for the user.</summary>
public sealed class CommandLineException : Exception
{
    /// <summary>Creates the exception with a message.</summary>
    public CommandLineException(string message) : base(message)
    {
    }

    /// <summary>Creates the exception with a message and a cause.</summary>
    public CommandLineException(string message, Exception innerException) : base(message, innerException)
    {
    }

    /// <summary>Creates the exception with a default message.</summary>
    public CommandLineException() : base("The command line is not valid.")
    {
    }
}
