using jemalloc.Configuration;

namespace jemalloc.Tests.Tuning;

/// <summary>
/// The one reading of a startup environment variable, shared by <c>JEMALLOC_NET_HUGE_PAGES</c>,
/// <c>JEMALLOC_NET_CHECKED</c> and <c>JEMALLOC_NET_QUARANTINE_BYTES</c>: unset and blank are the default,
/// a value not understood is the default and a note in the same words for each.
/// </summary>
public sealed class StartupVariableTests
{
    private const string Name = "JEMALLOC_NET_EXAMPLE";

    [Theory]
    [InlineData(null)]
    [InlineData("")]
    [InlineData(" ")]
    [InlineData("\t\r\n")]
    public void Unset_empty_or_blank_is_the_default_without_a_note(string? text)
    {
        StartupVariable<int> read = StartupVariable<int>.From(Name, text, _ => throw new InvalidOperationException("A blank value was parsed."), 5, "five");
        Assert.Equal(5, read.Value);
        Assert.Null(read.Ignored);
        Assert.Equal("", read.Note);
        Assert.Equal(Name, read.Name);
    }

    [Fact]
    public void A_value_understood_is_taken_without_a_note()
    {
        StartupVariable<int> read = StartupVariable<int>.From(Name, " 7 ", t => t.Trim() == "7" ? 7 : null, 5, "five");
        Assert.Equal(7, read.Value);
        Assert.Null(read.Ignored);
        Assert.Equal("", read.Note);
    }

    [Fact]
    public void A_value_not_understood_is_the_default_with_a_note_naming_the_variable_its_text_and_the_default()
    {
        StartupVariable<int> read = StartupVariable<int>.From(Name, "seven", _ => null, 5, "five");
        Assert.Equal(5, read.Value);
        Assert.Equal("seven", read.Ignored);
        Assert.Equal(" (JEMALLOC_NET_EXAMPLE=seven not understood: five)", read.Note);
    }

    [Fact]
    public void The_three_variables_notes_have_the_same_shape()
    {
        string huge = StartupVariable<HugePageSelection>.From(HugePageVariables.Selection, "sometimes", HugePagePolicy.ParseSelection, HugePageSelection.Measured, "measured").Note;
        string checkedMode = StartupVariable<bool>.From(CheckedModeVariables.Enabled, "yes", CheckedModeVariables.ParseEnabled, false, "off").Note;
        string quarantine = StartupVariable<long>.From(CheckedModeVariables.QuarantineBytes, "abc", CheckedModeVariables.ParseQuarantineBytes, 1, "256 MiB").Note;
        Assert.Equal(" (JEMALLOC_NET_HUGE_PAGES=sometimes not understood: measured)", huge);
        Assert.Equal(" (JEMALLOC_NET_CHECKED=yes not understood: off)", checkedMode);
        Assert.Equal(" (JEMALLOC_NET_QUARANTINE_BYTES=abc not understood: 256 MiB)", quarantine);
    }

    [Fact]
    public void The_note_keeps_to_one_line_and_cuts_a_long_value()
    {
        Assert.Equal(" (JEMALLOC_NET_EXAMPLE=a?b?c not understood: five)", StartupVariable<int>.From(Name, "a\nb\u0007c", _ => null, 5, "five").Note);

        string longText = new('x', StartupVariable<int>.ShownLength + 1);
        Assert.Equal(new string('x', StartupVariable<int>.ShownLength) + "...", StartupVariable<int>.Shown(longText));
        Assert.Equal(new string('x', StartupVariable<int>.ShownLength), StartupVariable<int>.Shown(longText[1..]));
        // The full text is kept; only the note is cut.
        Assert.Equal(longText, StartupVariable<int>.From(Name, longText, _ => null, 5, "five").Ignored);

        // A cut never splits a surrogate pair (U+1F600 is two chars).
        string pairAcrossTheCut = new string('x', StartupVariable<int>.ShownLength - 1) + "\U0001F600" + "y";
        Assert.Equal(new string('x', StartupVariable<int>.ShownLength - 1) + "...", StartupVariable<int>.Shown(pairAcrossTheCut));
        string pairBeforeTheCut = new string('x', StartupVariable<int>.ShownLength - 2) + "\U0001F600" + "y";
        Assert.Equal(new string('x', StartupVariable<int>.ShownLength - 2) + "\U0001F600...", StartupVariable<int>.Shown(pairBeforeTheCut));
    }
}
