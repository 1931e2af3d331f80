using static jemalloc.Tests.ChildProcess.Adversarial.ScenarioHelpers;

namespace jemalloc.Tests.ChildProcess.Adversarial;

/// <summary>
/// Failure class: torn copies, data changed by another thread while it is copied or read. Racy copies of
/// a FixedBuffer variable are always one whole buffer; an index list changed by another thread while
/// <c>Gather</c> runs (time of check to time of use) copies the right elements or throws; a
/// <see cref="FixedUtf8String"/> made from bytes another thread changes holds valid UTF-8 or throws.
/// </summary>
internal static class BufferTornCopyScenarios
{
    internal const string RaceFixedBufferCopies = "race-fixedbuffer-copies";
    internal const string BuffersGatherVsIndexFlips = "buffers-gather-vs-index-flips";
    internal const string BuffersFixedUtf8BytesVsFlips = "buffers-fixedutf8-bytes-vs-flips";

    internal static void Register(Dictionary<string, Action> all)
    {
        all[RaceFixedBufferCopies] = FixedBufferCopies;
        all[BuffersGatherVsIndexFlips] = GatherVsIndexFlips;
        all[BuffersFixedUtf8BytesVsFlips] = FixedUtf8BytesVsFlips;
    }

    private const long Sentinel = 0x5EED_5EED_5EED_5EEDL;
    private static readonly TimeSpan Budget = TimeSpan.FromSeconds(2);
    // ---- Racy copies of a FixedBuffer variable while another thread writes it

    private static FixedBuffer<long> s_sharedCopy;

    private static void FixedBufferCopies()
    {
        var small = new FixedBuffer<long>(3);
        var large = new FixedBuffer<long>(1000);
        small.Fill(3);
        large.Fill(1000);
        s_sharedCopy = small;
        long seenSmall = 0, seenLarge = 0;
        long[] counts = Check.RaceUntilMet("racy copies of two live buffers", TimeSpan.FromSeconds(1),
            () => Interlocked.Read(ref seenSmall) > 0 && Interlocked.Read(ref seenLarge) > 0, 5_000_000,
            i => s_sharedCopy = (i & 1) == 0 ? large : small,
            i => CheckCopy(s_sharedCopy, small, large, ref seenSmall, ref seenLarge),
            i => CheckCopy(s_sharedCopy, small, large, ref seenSmall, ref seenLarge));
        Check.Info($"INFO live copies: writes={counts[0]} reads={counts[1] + counts[2]} small={seenSmall} large={seenLarge}");
        // The race happened only if the readers copied the variable while it changed: both values seen.
        Check.True(counts[0] > 0 && counts[1] > 0 && counts[2] > 0, "both sides of the race ran");
        Check.True(seenSmall > 0 && seenLarge > 0, "the readers met both values of the variable", $"small={seenSmall} large={seenLarge}: the race did not happen");

        // The same with buffers that are freed and replaced all the time: a copy is one whole buffer,
        // live (its lease sees length == contents) or freed (throws).
        FixedBuffer<long> previous = default;
        long torn = 0, disposed = 0, good = 0;
        Check.RaceUntilMet("racy copies while buffers are freed", TimeSpan.FromSeconds(1),
            () => Interlocked.Read(ref good) > 0 && Interlocked.Read(ref disposed) > 0, 2_000_000,
            i =>
            {
                int length = 1 + (i % 512);
                var next = new FixedBuffer<long>(length);
                next.Fill(length);
                s_sharedCopy = next;
                if (previous != default)
                {
                    while (true)
                    {
                        try
                        {
                            previous.Free();
                            break;
                        }
                        catch (InvalidOperationException e) when (e is not ObjectDisposedException)
                        {
                            Thread.Yield(); // a reader's lease
                        }
                    }
                }

                previous = next;
            },
            i => LeaseCopy(s_sharedCopy, ref torn, ref disposed, ref good),
            i => LeaseCopy(s_sharedCopy, ref torn, ref disposed, ref good));
        Check.Info($"INFO copies: good={good} disposed={disposed} torn={torn}");
        Check.Equal(0L, torn, "torn copies");
        // The race happened only if readers leased live copies and also met copies of freed buffers.
        Check.True(good > 0 && disposed > 0, "the readers met live and freed buffers", $"good={good} disposed={disposed}: the race did not happen");
        small.Free();
        large.Free();
    }

    private static void CheckCopy(FixedBuffer<long> copy, FixedBuffer<long> small, FixedBuffer<long> large, ref long seenSmall, ref long seenLarge)
    {
        if (copy != small && copy != large)
        {
            Check.Fail("racy copy", "a copy equals neither buffer");
            return;
        }

        int length = copy.Length;
        long last = copy[length - 1];
        if (last != length || (copy == small) != (length == 3))
        {
            Check.Fail("racy copy", $"torn: length {length}, last element {last}");
        }

        if (copy == small)
        {
            Interlocked.Increment(ref seenSmall);
        }
        else
        {
            Interlocked.Increment(ref seenLarge);
        }
    }

    private static void LeaseCopy(FixedBuffer<long> copy, ref long torn, ref long disposed, ref long good)
    {
        // A reader that is slow between copying the variable and using the copy: the writer may free
        // the buffer meanwhile, which the lease must then refuse.
        Thread.SpinWait(20);
        try
        {
            using MemoryLease<long> lease = copy.Lease();
            long length = lease.Length;
            if (CountNot(lease.Span, length) != 0 || copy.Length != length)
            {
                Interlocked.Increment(ref torn);
                Check.Fail("racy copy", $"a leased copy of length {length} holds other contents: a mix of two buffers");
            }
            else
            {
                Interlocked.Increment(ref good);
            }
        }
        catch (ObjectDisposedException)
        {
            Interlocked.Increment(ref disposed);
        }
    }

    // One index of Gather's list flips between a valid index and one that, used unchecked, lands
    // in the middle of another array filled with a sentinel. Every Gather either copies the right
    // elements or throws IndexOutOfRangeException; the sentinel never reaches the destination.
    private static unsafe void GatherVsIndexFlips()
    {
        const int length = 1 << 16;
        const int count = 1 << 14;
        const long valid = 5;
        using var target = new HugeArray<long>(length);
        for (long i = 0; i < length; i++)
        {
            target[i] = (i * 7) + 1;
        }

        using var foreign = new HugeArray<long>(length, Sentinel);
        long evil;
        using (MemoryLease<long> mine = target.Lease())
        using (MemoryLease<long> theirs = foreign.Lease())
        {
            evil = ((theirs.Pointer - mine.Pointer) / sizeof(long)) + (length / 2);
        }

        Check.True(evil < 0 || evil >= length, "the foreign index is outside the target array", $"it is {evil}");
        var indices = new long[count];
        for (int i = 0; i < count; i++)
        {
            indices[i] = (i * 31L) % length;
        }

        indices[0] = valid;
        var destination = new long[count];
        long gathered = 0, refused = 0, flips = 0, foreignReads = 0, wrong = 0;
        Check.RaceUntil("Gather vs a thread flipping an index", Budget, firstBodyAtLeast: 1000, int.MaxValue,
            i =>
            {
                destination[0] = 0;
                try
                {
                    target.Gather(indices, destination);
                }
                catch (IndexOutOfRangeException)
                {
                    refused++;
                    return;
                }

                gathered++;
                if (destination[0] == Sentinel)
                {
                    foreignReads++;
                }
                else if (destination[0] != (valid * 7) + 1)
                {
                    wrong++;
                }

                for (int j = 1; j < count; j++)
                {
                    if (destination[j] != ((indices[j] * 7) + 1))
                    {
                        wrong++;
                        break;
                    }
                }
            },
            i =>
            {
                // Varying pauses, so that some flips land inside a Gather, between its passes.
                Volatile.Write(ref indices[0], evil);
                Thread.SpinWait(1 + (i % 97 * 7));
                Volatile.Write(ref indices[0], valid);
                Thread.SpinWait(1 + (i % 89 * 11));
                flips++;
            });
        Check.Info($"INFO gathered={gathered} refused={refused} flips={flips}");
        Check.Equal(0L, foreignReads, "Gathers that copied the foreign array's sentinel instead of throwing");
        Check.Equal(0L, wrong, "Gathers that copied neither the right elements nor the sentinel");
        Check.True(gathered > 0 && refused > 0 && flips > 0, "both sides ran and met", $"gathered={gathered} refused={refused} flips={flips}");
    }

    // A byte of the UTF-8 given to the constructor flips between a letter and a byte that is never
    // valid UTF-8: every string made holds valid UTF-8 (the check and the copy saw the same bytes),
    // or the constructor throws ArgumentException.
    private static void FixedUtf8BytesVsFlips()
    {
        var bytes = new byte[1 << 20];
        bytes.AsSpan().Fill((byte)'a');
        long made = 0, refused = 0, flips = 0, invalid = 0;
        Check.RaceUntil("new FixedUtf8String(bytes) vs a thread flipping a byte", Budget, firstBodyAtLeast: 1000, int.MaxValue,
            i =>
            {
                FixedUtf8String text;
                try
                {
                    text = new FixedUtf8String(bytes);
                }
                catch (ArgumentException)
                {
                    refused++;
                    return;
                }

                made++;
                if (!System.Text.Unicode.Utf8.IsValid(text.ToArray()))
                {
                    invalid++;
                }

                text.Free();
            },
            i =>
            {
                Volatile.Write(ref bytes[0], 0xFF);
                Thread.SpinWait(1 + (i % 97 * 7));
                Volatile.Write(ref bytes[0], (byte)'a');
                Thread.SpinWait(1 + (i % 89 * 11));
                flips++;
            });
        Check.Info($"INFO made={made} refused={refused} flips={flips}");
        Check.Equal(0L, invalid, "strings made that hold invalid UTF-8");
        Check.True(made > 0 && refused > 0 && flips > 0, "both sides ran and met", $"made={made} refused={refused} flips={flips}");
    }
}
