namespace jemalloc;

/// <summary>A piece of text jemalloc printed through its message function (<c>je_malloc_message</c>).</summary>
public sealed class JemMessageEventArgs : EventArgs
{
    /// <summary>Creates the event data for <paramref name="message"/>.</summary>
    /// <param name="message">The text jemalloc printed.</param>
    public JemMessageEventArgs(string message) => Message = message;

    /// <summary>
    /// The text, as jemalloc printed it: warnings and errors start with <c>&lt;jemalloc&gt;:</c> and end
    /// with a new line; a statistics report (<see cref="Jem.PrintStats(string?)"/>) arrives in many pieces.
    /// </summary>
    public string Message { get; }
}
