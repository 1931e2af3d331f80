using System.Buffers;
using System.Runtime.CompilerServices;
using System.Text;
using System.Text.Unicode;
using jemalloc.Records;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.Records;

// A hostile review of StoredStringEncoding.EncodeShort: every length to 300 at every alignment of
// the span, each kind of character at each block boundary, guard bytes on both sides of a
// destination of exactly three bytes per character, and text another thread changes to any kind of
// character (three-byte ones and surrogates too) while it is encoded. Run with
// DOTNET_EnableHWIntrinsic=0, the same tests check the scalar loop alone.
[Collection(LeakChecked.Name)]
public sealed class StoredStringEncodingReviewTests : LeakCheckedTest
{
    private const int Guard = 32;
    private const byte GuardByte = 0xEE;

    // Reused by AssertEncodesAsTheFramework: millions of calls would otherwise allocate gigabytes.
    [ThreadStatic]
    private static byte[]? s_buffer;

    [ThreadStatic]
    private static byte[]? s_expected;

    // One of each kind: ASCII at both ends, two-byte at both ends, three-byte at both ends and around
    // the surrogates, a high and a low surrogate.
    private static readonly char[] Kinds = ['\0', '\u007f', '\u0080', '\u07ff', '\u0800', '\ud7ff', '\ue000', '\uffff', '\ud800', '\udbff', '\udc00', '\udfff'];

    // Where a block, the 16-character prefix step or the tail changes.
    private static readonly int[] Boundaries = [0, 1, 6, 7, 8, 9, 15, 16, 17, 23, 24, 25, 31, 32, 33];

    [Fact]
    public void Every_length_to_300_at_every_alignment_with_each_kind_at_each_boundary_encodes_as_the_framework_does()
    {
        char[] storage = new char[300 + 8];
        foreach (char fill in new[] { 'a', 'é', '\u0800' })
        {
            for (int length = 0; length <= 300; length++)
            {
                for (int align = 0; align < 8; align++)
                {
                    Span<char> text = storage.AsSpan(align, length);
                    text.Fill(fill);
                    AssertEncodesAsTheFramework(text, align);
                    foreach (char kind in Kinds)
                    {
                        foreach (int boundary in Boundaries)
                        {
                            foreach (int at in new[] { boundary, length - 1 - boundary })
                            {
                                if (at < 0 || at >= length)
                                {
                                    continue;
                                }

                                text[at] = kind;
                                AssertEncodesAsTheFramework(text, align);
                                if (at + 1 < length && char.IsHighSurrogate(kind))
                                {
                                    // A pair across the boundary.
                                    text[at + 1] = '\udc00';
                                    AssertEncodesAsTheFramework(text, align);
                                    text[at + 1] = fill;
                                }

                                text[at] = fill;
                            }
                        }
                    }
                }
            }
        }
    }

    [Theory]
    [InlineData(11)]
    [InlineData(12)]
    [InlineData(13)]
    public void Random_text_of_every_kind_at_random_alignments_encodes_as_the_framework_does(int seed)
    {
        var random = new Random(seed);
        char[] storage = new char[300 + 8];
        for (int round = 0; round < 20_000; round++)
        {
            int length = random.Next(301);
            int align = random.Next(8);
            Span<char> text = storage.AsSpan(align, length);
            // Runs of one kind so that blocks of one kind and switches inside a block both occur.
            int kindWeight = random.Next(4);
            for (int i = 0; i < length; i++)
            {
                int pick = random.Next(100);
                text[i] = pick switch
                {
                    _ when pick < 25 * kindWeight / 2 => (char)random.Next(0x80),
                    < 85 => (char)random.Next(0x80, 0x800),
                    < 97 => (char)random.Next(0x800, 0xD800),
                    < 99 => (char)random.Next(0xD800, 0xDC00),
                    _ => (char)random.Next(0xDC00, 0xE000),
                };
                if (char.IsHighSurrogate(text[i]) && i + 1 < length && random.Next(4) != 0)
                {
                    text[++i] = (char)random.Next(0xDC00, 0xE000);
                }
            }

            AssertEncodesAsTheFramework(text, align);
        }
    }

    [Theory]
    [InlineData(1)]
    [InlineData(8)]
    [InlineData(300)]
    public void A_destination_of_fewer_than_three_bytes_per_character_is_refused_before_anything_is_written(int length)
    {
        string text = new('a', length);
        byte[] buffer = new byte[3 * length];
        buffer.AsSpan().Fill(GuardByte);
        ArgumentException e = Assert.Throws<ArgumentException>(() => StoredStringEncoding.EncodeShort(text, buffer.AsSpan(0, (3 * length) - 1)));
        Assert.Equal("destination", e.ParamName);
        Assert.Equal(-1, buffer.AsSpan().IndexOfAnyExcept(GuardByte));
    }

    // Another thread flips characters among every kind (three-byte ones and surrogates included)
    // while the text is encoded: each result must be whole UTF-8 (or the complement of an index
    // inside the text), of one UTF-16 character per character, and no byte may be written outside
    // a destination of exactly three bytes per character.
    [Theory]
    [InlineData(0, 'a', 'é')]
    [InlineData(1, 'a', '\u0800')]
    [InlineData(2, 'é', '\u0800')]
    [InlineData(3, 'a', '\ud83d')]
    [InlineData(4, 'é', '\ude00')]
    [InlineData(5, '\u07ff', '\uffff')]
    public void Text_another_thread_changes_to_any_kind_meanwhile_encodes_to_whole_UTF8_inside_the_destination(int seed, char one, char other)
    {
        char[] storage = new char[300 + 8];
        storage.AsSpan().Fill(one);
        using var stop = new CancellationTokenSource();
        var flipper = new Thread(() =>
        {
            var random = new Random(seed);
            while (!stop.IsCancellationRequested)
            {
                int at = random.Next(storage.Length);
                Volatile.Write(ref Unsafe.As<char, ushort>(ref storage[at]), storage[at] == one ? other : one);
            }
        })
        { IsBackground = true };
        flipper.Start();

        try
        {
            var random = new Random(seed + 100);
            byte[] buffer = new byte[Guard + (3 * 300) + Guard];
            char[] decoded = new char[300];
            for (int round = 0; round < 50_000; round++)
            {
                int length = round % 4 == 0 ? random.Next(301) : random.Next(8, 41);
                int align = random.Next(8);
                buffer.AsSpan().Fill(GuardByte);
                int written = StoredStringEncoding.EncodeShort(storage.AsSpan(align, length), buffer.AsSpan(Guard, 3 * length));

                Assert.Equal(-1, buffer.AsSpan(0, Guard).IndexOfAnyExcept(GuardByte));
                Assert.Equal(-1, buffer.AsSpan(Guard + (3 * length)).IndexOfAnyExcept(GuardByte));
                if (written < 0)
                {
                    Assert.InRange(~written, 0, length - 1);
                    continue;
                }

                Assert.InRange(written, length, 3 * length);
                ReadOnlySpan<byte> bytes = buffer.AsSpan(Guard, written);
                Assert.True(Utf8.IsValid(bytes), $"Not whole UTF-8 at length {length}, alignment {align}: {Convert.ToHexString(bytes)}");
                Assert.Equal(length, Encoding.UTF8.GetChars(bytes, decoded));
                Assert.Equal(-1, decoded.AsSpan(0, length).IndexOfAnyExcept(one, other));
            }
        }
        finally
        {
            stop.Cancel();
            flipper.Join();
        }
    }

    // The same through the public API, which stores the encoder's bytes unchecked: whatever another
    // thread does to the span, what is stored is valid UTF-8 or nothing is stored and an
    // ArgumentException says why.
    [Fact]
    public void A_store_given_a_span_another_thread_changes_stores_valid_UTF8_or_refuses_it()
    {
        char[] storage = new char[300];
        storage.AsSpan().Fill('a');
        char[] kinds = ['a', 'é', '\u0800', '\ud83d', '\ude00'];
        using var stop = new CancellationTokenSource();
        var flipper = new Thread(() =>
        {
            var random = new Random(7);
            while (!stop.IsCancellationRequested)
            {
                int at = random.Next(storage.Length);
                char kind = kinds[random.Next(kinds.Length)];
                Volatile.Write(ref Unsafe.As<char, ushort>(ref storage[at]), kind);
                if (char.IsSurrogate(kind))
                {
                    // Surrogates only for a moment, or they pile up and nearly every span is refused,
                    // leaving the one- to three-byte flips (where a character read twice would show) untried.
                    Thread.SpinWait(50);
                    Volatile.Write(ref Unsafe.As<char, ushort>(ref storage[at]), 'a');
                }
            }
        })
        { IsBackground = true };
        flipper.Start();

        int stored = 0;
        int refused = 0;
        try
        {
            using var store = new Utf8StringStore();
            var random = new Random(8);
            for (int round = 0; round < 20_000; round++)
            {
                int length = random.Next(StoredStringEncoding.ShortChars + 1);
                int align = random.Next(Math.Min(8, storage.Length - length) + 1);
                StoredUtf8String value;
                try
                {
                    value = store.Add(storage.AsSpan(align, length));
                }
                catch (ArgumentException e)
                {
                    Assert.Contains("unpaired surrogate", e.Message, StringComparison.Ordinal);
                    refused++;
                    continue;
                }

                Assert.True(value.IsValid);
                Assert.True(Utf8.IsValid(value.ToArray()), Convert.ToHexString(value.ToArray()));
                Assert.Equal(length, Encoding.UTF8.GetCharCount(value.ToArray()));
                stored++;
            }

            Assert.Equal(store.Count, stored);
        }
        finally
        {
            stop.Cancel();
            flipper.Join();
        }

        // Both outcomes occurred, or the test checked less than it says.
        Assert.True(stored > 0 && refused > 0, $"stored {stored}, refused {refused}");
    }

    // The framework's bytes, or the complement of the index of the first unpaired surrogate; the
    // destination exactly three bytes per character inside guard bytes, itself at an offset that
    // follows the text's alignment (so both the loads and the stores are misaligned in every way).
    private static void AssertEncodesAsTheFramework(ReadOnlySpan<char> text, int align)
    {
        int size = 3 * text.Length;
        int before = Guard + align;
        byte[] buffer = s_buffer ??= new byte[Guard + 8 + (3 * 300) + Guard];
        buffer.AsSpan().Fill(GuardByte);
        int written = StoredStringEncoding.EncodeShort(text, buffer.AsSpan(before, size));

        byte[] expected = s_expected ??= new byte[3 * 300];
        OperationStatus status = Utf8.FromUtf16(text, expected.AsSpan(0, size), out int read, out int length, replaceInvalidSequences: false);
        if (status == OperationStatus.Done)
        {
            Assert.Equal(length, written);
            Assert.True(expected.AsSpan(0, length).SequenceEqual(buffer.AsSpan(before, written)), $"Length {text.Length}, alignment {align}: {Convert.ToHexString(expected.AsSpan(0, length))} != {Convert.ToHexString(buffer.AsSpan(before, written))}");
        }
        else
        {
            Assert.Equal(OperationStatus.InvalidData, status);
            Assert.Equal(~read, written);
        }

        Assert.Equal(-1, buffer.AsSpan(0, before).IndexOfAnyExcept(GuardByte));
        Assert.Equal(-1, buffer.AsSpan(before + size).IndexOfAnyExcept(GuardByte));
    }
}
