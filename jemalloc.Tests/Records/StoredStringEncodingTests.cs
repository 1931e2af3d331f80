using System.Buffers;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Runtime.Intrinsics;
using System.Runtime.Intrinsics.X86;
using System.Text;
using System.Text.Unicode;
using jemalloc.Records;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.Records;

// The store's encoder (its vector paths for ASCII and for blocks of eight characters below U+0800,
// and the character loop) checked against the framework's encoder at every length, alignment and
// block boundary, inside guard bytes; and text another thread changes meanwhile, which must still
// come out as whole UTF-8 inside the destination. Run with DOTNET_EnableHWIntrinsic=0, the same tests
// check the character loop alone.
[Collection(LeakChecked.Name)]
public sealed class StoredStringEncodingTests : LeakCheckedTest
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

    // Each ASCII mask's lanes drawn from these in turn, so every edge meets every lane.
    private static readonly char[] OneByte = ['\0', 'a', '\u007f'];
    private static readonly char[] TwoByte = ['\u0080', 'é', '\u07ff'];

    // So these tests check the block path wherever it can run: on every Arm64 processor (the table
    // lookup is in its baseline) and on x64 ones with SSSE3, unless hardware intrinsics are turned off.
    [Fact]
    public void The_block_path_runs_wherever_a_byte_shuffle_is_one_instruction()
    {
        bool expected = RuntimeInformation.ProcessArchitecture switch
        {
            Architecture.Arm64 => true,
            Architecture.X64 or Architecture.X86 => Ssse3.IsSupported,
            _ => false,
        };
        Assert.Equal(expected && Vector128.IsHardwareAccelerated, StoredStringEncoding.EncodesTwoByteBlocks);
    }

    // Every one of the 256 ASCII masks, as the first block and as a later one (after an ASCII run the
    // prefix narrows, after another block, after one that needs the most or fewest bytes), followed
    // by every tail length: a wrong shuffle or a wrong advance moves or loses a byte.
    [Fact]
    public void Every_ASCII_mask_at_every_block_position_encodes_as_the_framework_does()
    {
        for (int mask = 0; mask < 256; mask++)
        {
            string block = Block(mask, mask);
            foreach (string before in new[] { "", "abcdefgh", "0123456789abcdef", Block(0, 1), Block(0xFF, 2), Block(0x5A, 3) + Block(0xA5, 4) })
            {
                for (int tail = 0; tail < 10; tail++)
                {
                    AssertEncodesAsTheFramework(before + block + Block(~mask & 0xFF, mask + 1)[..Math.Min(tail, 8)] + new string('z', Math.Max(0, tail - 8)));
                }
            }
        }
    }

    // A character of U+0800 or more (or a surrogate, paired or not) at every position of the first,
    // second and third block: the block it is in, and the rest, go through the scalar loop.
    [Theory]
    [InlineData(0x0800)]
    [InlineData(0x65E5)]
    [InlineData(0xFFFF)]
    [InlineData(0xD83D, 0xDE00)]
    [InlineData(0xD800)]
    [InlineData(0xDFFF)]
    [InlineData(0xDC00, 0xD800)]
    public void A_character_of_three_or_four_bytes_or_an_unpaired_surrogate_anywhere_in_a_block_is_handled_as_the_framework_does(int first, int second = -1)
    {
        string other = second < 0 ? $"{(char)first}" : $"{(char)first}{(char)second}";
        for (int length = 0; length <= 26; length++)
        {
            for (int at = 0; at <= length; at++)
            {
                string text = Mixed(length, seed: at);
                AssertEncodesAsTheFramework(text[..at] + other + text[at..]);
            }
        }
    }

    // Every length from 0 to 64 (the blocks and the tail in every proportion), in patterns that make
    // each block all ASCII, all two-byte or mixed, with and without a leading ASCII run.
    [Fact]
    public void Text_of_every_length_around_the_block_boundaries_encodes_as_the_framework_does()
    {
        for (int length = 0; length <= 64; length++)
        {
            AssertEncodesAsTheFramework(new string('é', length));
            AssertEncodesAsTheFramework(new string('\u07ff', length));
            for (int seed = 0; seed < 8; seed++)
            {
                string mixed = Mixed(length, seed);
                AssertEncodesAsTheFramework(mixed);
                AssertEncodesAsTheFramework(new string('a', seed * 3) + mixed);
            }
        }
    }

    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(3)]
    public void Random_text_mostly_below_U0800_encodes_as_the_framework_does(int seed)
    {
        var random = new Random(seed);
        for (int round = 0; round < 5_000; round++)
        {
            int length = random.Next(StoredStringEncoding.ShortChars + 1);
            var chars = new char[length];
            for (int i = 0; i < length; i++)
            {
                int kind = random.Next(100);
                chars[i] = kind switch
                {
                    < 50 => (char)random.Next(0x80),
                    < 97 => (char)random.Next(0x80, 0x800),
                    < 99 => (char)random.Next(0x800, 0x10000),
                    _ => (char)random.Next(0xD800, 0xE000),
                };
            }

            AssertEncodesAsTheFramework(new string(chars));
        }
    }

    // Eight characters whose lane k is ASCII where bit k of asciiMask is set, each drawn from the edges.
    private static string Block(int asciiMask, int seed) =>
        string.Create(8, (asciiMask, seed), static (span, state) =>
        {
            for (int lane = 0; lane < 8; lane++)
            {
                char[] from = (state.asciiMask & (1 << lane)) != 0 ? OneByte : TwoByte;
                span[lane] = from[(lane + state.seed) % from.Length];
            }
        });

    private static string Mixed(int length, int seed) =>
        string.Create(length, seed, static (span, s) =>
        {
            for (int i = 0; i < span.Length; i++)
            {
                span[i] = ((i * 7) + s) % 5 < 2 ? OneByte[(i + s) % OneByte.Length] : TwoByte[(i + s) % TwoByte.Length];
            }
        });

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
            for (int flips = 1; !stop.IsCancellationRequested; flips++)
            {
                int at = random.Next(storage.Length);
                Volatile.Write(ref Unsafe.As<char, ushort>(ref storage[at]), storage[at] == one ? other : one);
                if (flips % 1024 == 0)
                {
                    // A call into the runtime now and then, where the thread can be stopped for a
                    // collection or a tier-up: under wine a loop without one is never stopped, and the
                    // test thread then waits forever.
                    Thread.Yield();
                }
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
    private static void AssertEncodesAsTheFramework(ReadOnlySpan<char> text, int align = 0)
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
