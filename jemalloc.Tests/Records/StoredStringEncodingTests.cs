using System.Buffers;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Runtime.Intrinsics;
using System.Runtime.Intrinsics.X86;
using System.Text;
using System.Text.Unicode;
using jemalloc.Records;

namespace jemalloc.Tests.Records;

// The encoder's vector path for blocks of eight characters below U+0800 (ASCII and two-byte mixed),
// checked against the framework's encoder. Run with DOTNET_EnableHWIntrinsic=0, the same tests check
// the scalar loop alone.
public sealed class StoredStringEncodingTests
{
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

    // Utf8StringStore.Add(ReadOnlySpan<char>) stores the encoder's bytes unchecked, trusting that each
    // character is read once: so while another thread flips the caller's characters between one- and
    // two-byte ones, every result must still be whole UTF-8 of one character per character, written
    // inside the destination (a character read twice, once for its length and once for its bytes,
    // could break both). Lengths around the blocks, where a tail shorter than a block is left.
    [Fact]
    public void Text_another_thread_changes_meanwhile_encodes_to_whole_UTF8_inside_the_destination()
    {
        const int Guard = 32;
        char[] text = new char[40];
        text.AsSpan().Fill('a');
        using var stop = new CancellationTokenSource();
        var flipper = new Thread(() =>
        {
            var random = new Random(5);
            while (!stop.IsCancellationRequested)
            {
                int at = random.Next(text.Length);
                Volatile.Write(ref Unsafe.As<char, ushort>(ref text[at]), text[at] == 'a' ? 'é' : 'a');
            }
        })
        { IsBackground = true };
        flipper.Start();

        try
        {
            byte[] buffer = new byte[Guard + (3 * text.Length) + Guard];
            char[] decoded = new char[text.Length];
            for (int round = 0; round < 100_000; round++)
            {
                int length = 8 + (round % 25);
                buffer.AsSpan().Fill(0xEE);
                int written = StoredStringEncoding.EncodeShort(text.AsSpan(0, length), buffer.AsSpan(Guard, 3 * length));

                Assert.InRange(written, length, 2 * length);
                ReadOnlySpan<byte> bytes = buffer.AsSpan(Guard, written);
                Assert.True(Utf8.IsValid(bytes), $"Not whole UTF-8 at length {length}: {Convert.ToHexString(bytes)}");
                Assert.Equal(length, Encoding.UTF8.GetChars(bytes, decoded));
                Assert.Equal(-1, decoded.AsSpan(0, length).IndexOfAnyExcept('a', 'é'));
                Assert.Equal(-1, buffer.AsSpan(0, Guard).IndexOfAnyExcept((byte)0xEE));
                Assert.Equal(-1, buffer.AsSpan(Guard + (3 * length)).IndexOfAnyExcept((byte)0xEE));
            }
        }
        finally
        {
            stop.Cancel();
            flipper.Join();
        }
    }

    // The framework's bytes, or the complement of the index of the first unpaired surrogate; and not
    // a byte written past the destination, which is exactly three bytes per character.
    private static void AssertEncodesAsTheFramework(string text)
    {
        int size = 3 * text.Length;
        byte[] buffer = new byte[size + 32];
        buffer.AsSpan().Fill(0xEE);
        int written = StoredStringEncoding.EncodeShort(text, buffer.AsSpan(0, size));

        byte[] expected = new byte[size];
        OperationStatus status = Utf8.FromUtf16(text, expected, out int read, out int length, replaceInvalidSequences: false);
        if (status == OperationStatus.Done)
        {
            Assert.Equal(Encoding.UTF8.GetBytes(text), buffer[..written]);
            Assert.Equal(length, written);
        }
        else
        {
            Assert.Equal(OperationStatus.InvalidData, status);
            Assert.Equal(~read, written);
        }

        Assert.All(buffer[size..], b => Assert.Equal((byte)0xEE, b));
    }
}
