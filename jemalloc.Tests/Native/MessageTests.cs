using System.Text;

namespace jemalloc.Tests.Native;

/// <summary>jemalloc's message function is process-wide: these tests run alone.</summary>
[Collection(ProcessWideState.Name)]
public class MessageTests
{
    [Fact]
    public void Listeners_receive_what_jemalloc_prints()
    {
        var received = new StringBuilder();
        void OnMessage(object? sender, JemMessageEventArgs e) => received.Append(e.Message);
        Jem.MessageReceived += OnMessage;
        try
        {
            Jem.PrintStats("mdablxeh");
        }
        finally
        {
            Jem.MessageReceived -= OnMessage;
        }

        string text = received.ToString();
        Assert.Contains("___ Begin jemalloc statistics ___", text, StringComparison.Ordinal);
        Assert.Contains("Version: \"5.3.0-", text, StringComparison.Ordinal);
    }

    [Fact]
    public void A_writer_receives_what_jemalloc_prints()
    {
        using var writer = new StringWriter();
        Jem.MessageWriter = writer;
        try
        {
            Assert.Same(writer, Jem.MessageWriter);
            Jem.PrintStats("J");
        }
        finally
        {
            Jem.MessageWriter = null;
        }

        Assert.Null(Jem.MessageWriter);
        Assert.StartsWith("{", writer.ToString().TrimStart(), StringComparison.Ordinal);
        Assert.Contains("\"jemalloc\"", writer.ToString(), StringComparison.Ordinal);
    }

    [Fact]
    public void A_throwing_handler_or_writer_cannot_break_jemalloc_or_the_process()
    {
        using var writer = new StringWriter();
        static void Throwing(object? sender, JemMessageEventArgs e) => throw new InvalidOperationException("handler failure");
        Jem.MessageReceived += Throwing;
        Jem.MessageWriter = writer;
        try
        {
            Jem.PrintStats("J");
        }
        finally
        {
            Jem.MessageReceived -= Throwing;
            Jem.MessageWriter = null;
        }

        // The failing handler did not stop the writer, and the call returned normally.
        Assert.Contains("\"jemalloc\"", writer.ToString(), StringComparison.Ordinal);

        using var broken = new StringWriter();
        broken.Dispose();
        Jem.MessageWriter = broken;
        try
        {
            Jem.PrintStats("J");
        }
        finally
        {
            Jem.MessageWriter = null;
        }

        Assert.StartsWith("5.3.0", Jem.Version, StringComparison.Ordinal);
    }

    [Fact]
    public void Without_listeners_jemalloc_prints_to_standard_error_again()
    {
        ChildProcessRunner.Result result = ChildProcessRunner.RunHelper(new Dictionary<string, string?>(), "messages");
        Assert.True(result.ExitCode == 0, result.ToString());

        // Printed three times: before a writer was set and after it was removed to stderr, in between to the writer.
        Assert.Equal(2, Occurrences(result.Error, "\"jemalloc\""));
        string captured = result.Output[result.Output.IndexOf("CAPTURED_BEGIN", StringComparison.Ordinal)..result.Output.IndexOf("CAPTURED_END", StringComparison.Ordinal)];
        Assert.Equal(1, Occurrences(captured, "\"jemalloc\""));
    }

    [Fact]
    public void A_writer_set_before_the_library_loads_is_hooked_in_when_it_loads()
    {
        ChildProcessRunner.Result result = ChildProcessRunner.RunHelper(new Dictionary<string, string?>(), "messages-before-load");
        Assert.True(result.ExitCode == 0, result.ToString());
        Assert.Contains("LOADED_AFTER_SETTING_WRITER False", result.Output, StringComparison.Ordinal);
        Assert.Equal(1, Occurrences(result.Output, "\"jemalloc\""));
        Assert.Equal(0, Occurrences(result.Error, "\"jemalloc\""));
    }

    private static int Occurrences(string text, string value)
    {
        int count = 0;
        for (int index = text.IndexOf(value, StringComparison.Ordinal); index >= 0; index = text.IndexOf(value, index + 1, StringComparison.Ordinal))
        {
            count++;
        }

        return count;
    }
}
