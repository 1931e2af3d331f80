using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace jemalloc.Tests.ChildProcess.Adversarial;

/// <summary>
/// The array-like structures attacked a second time (issue 21): an index list changed by another
/// thread while <c>Gather</c> runs (time of check to time of use); an acquired array whose last
/// reference is dropped (the finalizer must not free what <c>Acquire()</c> holds); a
/// <see cref="FixedUtf8String"/> compared with a .NET string of more than int.MaxValue / 3
/// characters, and made from text of int.MaxValue UTF-8 bytes (lengths that overflow an int).
/// </summary>
internal static class BufferRoundTwoScenarios
{
    private const long Sentinel = 0x5EED_5EED_5EED_5EEDL;
    private const int Victim = 0x22222222;
    private static readonly TimeSpan Budget = TimeSpan.FromSeconds(2);

    internal static void Register(Dictionary<string, Action> all)
    {
        all["buffers2-gather-vs-index-flips"] = GatherVsIndexFlips;
        all["buffers2-acquire-keeps-memory-safearray"] = () => AcquireKeepsMemory(huge: false);
        all["buffers2-acquire-keeps-memory-hugearray"] = () => AcquireKeepsMemory(huge: true);
        all["buffers2-fixedutf8-huge-string-match"] = () => FixedUtf8HugeStringCompare(lastDiffers: false);
        all["buffers2-fixedutf8-huge-string-mismatch"] = () => FixedUtf8HugeStringCompare(lastDiffers: true);
        all["buffers2-fixedutf8-int-max-bytes"] = FixedUtf8IntMaxBytes;
        all["buffers2-fixedutf8-bytes-vs-flips"] = FixedUtf8BytesVsFlips;
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

    // An acquired array whose last managed reference is dropped: the finalizer runs, yet the memory
    // stays allocated (a leak the ledger shows), so the acquirer's pointer still reads what it wrote
    // and no later allocation of the same size receives the block.
    private static unsafe void AcquireKeepsMemory(bool huge)
    {
        const int length = 1024;
        var options = new AllocationOptions(MallocxFlags.NoThreadCache);
        (nint pointer, AllocationHandle handle, WeakReference dropped) = AcquireAndDrop(huge, length, options);
        for (int round = 0; round < 20 && dropped.IsAlive; round++)
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }

        GC.Collect();
        GC.WaitForPendingFinalizers();
        Check.True(!dropped.IsAlive, "the dropped array was finalized and collected");

        // Without a thread cache a freed block goes straight back to its bin, so one of these would
        // receive it had the finalizer freed it.
        var others = new List<NativeBuffer<int>>();
        for (int i = 0; i < 256; i++)
        {
            others.Add(huge ? new HugeArray<int>(length, Victim, options) : new SafeArray<int>(length, Victim, options));
        }

        int* values = (int*)pointer;
        int changed = 0;
        for (int i = 0; i < length; i++)
        {
            if (values[i] != ExpectedAt(i))
            {
                changed++;
            }
        }

        Check.Equal(0, changed, "elements of the acquired array changed after its finalizer ran");
        Check.True(handle.IsValid, "the acquired array's memory is still live in the ledger");
        Check.Equal(1, handle.AcquireCount, "the acquired array's acquire count");
        Check.True(
            AllocationLedger.Snapshot().Any(a => a.Address == pointer && a.AcquireCount == 1),
            "the ledger lists the acquired, leaked block");
        Check.True(others.All(o => o.Pointer != pointer), "no later allocation received the acquired block");
        foreach (NativeBuffer<int> other in others)
        {
            other.Dispose();
        }
    }

    private static int ExpectedAt(int i) => (i * 13) ^ 0x0F0F;

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static (nint Pointer, AllocationHandle Handle, WeakReference Dropped) AcquireAndDrop(bool huge, int length, AllocationOptions options)
    {
        NativeBuffer<int> array = huge ? new HugeArray<int>(length, options) : new SafeArray<int>(length, options);
        using (MemoryLease<int> lease = array.Lease())
        {
            for (int i = 0; i < length; i++)
            {
                lease[i] = ExpectedAt(i);
            }
        }

        array.Acquire();
        return (array.Pointer, array.Handle, new WeakReference(array, trackResurrection: true));
    }

    // 3 * 715,827,883 overflows an int: each method must still find the text the string holds, and
    // not find it once the string's last byte differs (one scenario each: both take a while). The
    // string is made from bytes outside both heaps, given back before the text is made, so that the
    // process never holds two texts of 1.4 GB.
    private static unsafe void FixedUtf8HugeStringCompare(bool lastDiffers)
    {
        const int length = (int.MaxValue / 3) + 1;
        byte* source = (byte*)NativeMemory.Alloc(length);
        FixedUtf8String utf8;
        try
        {
            var bytes = new Span<byte>(source, length);
            bytes.Fill((byte)'a');
            if (lastDiffers)
            {
                bytes[^1] = (byte)'b';
            }

            utf8 = new FixedUtf8String(bytes);
        }
        finally
        {
            NativeMemory.Free(source);
        }

        try
        {
            Check.Equal(length, utf8.Length, "the huge string's UTF-8 length");
            string text = new('a', length);
            string what = lastDiffers ? "a string of int.MaxValue / 3 + 1 characters that differs in the last one" : "a string of int.MaxValue / 3 + 1 characters";
            Check.Equal(!lastDiffers, utf8.Equals(text), $"Equals(string) of {what}");
            Check.Equal(!lastDiffers, utf8 == text, $"== of {what}");
            Check.Equal(lastDiffers ? -1 : 0, utf8.IndexOf(text), $"IndexOf(string) of {what}");
            Check.Equal(lastDiffers ? -1 : 0, utf8.LastIndexOf(text), $"LastIndexOf(string) of {what}");
            Check.Equal(!lastDiffers, utf8.StartsWith(text), $"StartsWith(string) of {what}");
            Check.Equal(!lastDiffers, utf8.EndsWith(text), $"EndsWith(string) of {what}");
        }
        finally
        {
            utf8.Free();
        }
    }

    // Text whose UTF-8 is int.MaxValue bytes leaves no room for the terminating zero: refused with
    // an ArgumentOutOfRangeException naming the caller's argument, not an overflowed length.
    private static unsafe void FixedUtf8IntMaxBytes()
    {
        // int.MaxValue bytes of zeros (valid UTF-8), never touched: the length is refused before
        // anything is read. Before the string below, whose managed memory stays resident.
        using (var bytes = new HugeArray<byte>(int.MaxValue, AllocationOptions.Default))
        using (MemoryLease<byte> lease = bytes.Lease())
        {
            ArgumentOutOfRangeException? fromBytes = null;
            try
            {
                _ = new FixedUtf8String(lease.AsSpan(0, int.MaxValue));
            }
            catch (ArgumentOutOfRangeException e)
            {
                fromBytes = e;
            }

            Check.True(fromBytes?.ParamName == "utf8", "new FixedUtf8String(ReadOnlySpan<byte>) of int.MaxValue bytes names 'utf8'", fromBytes?.ToString() ?? "returned normally");
        }

        // 715,827,882 three-byte characters and one ASCII letter: int.MaxValue UTF-8 bytes.
        string text = string.Create((int.MaxValue / 3) + 1, 0, (span, _) =>
        {
            span.Fill('\u20AC');
            span[^1] = 'a';
        });
        ArgumentOutOfRangeException? fromString = CatchOutOfRange(() => _ = new FixedUtf8String(text));
        Check.True(fromString?.ParamName == "value", "new FixedUtf8String(string) of int.MaxValue UTF-8 bytes names 'value'", fromString?.ToString() ?? "returned normally");
        text = null!;
        GC.Collect();

        // 715,827,883 three-byte characters: more UTF-8 bytes than an int counts.
        text = new string('\u20AC', (int.MaxValue / 3) + 1);
        fromString = CatchOutOfRange(() => _ = new FixedUtf8String(text));
        Check.True(fromString?.ParamName == "value", "new FixedUtf8String(string) of more than int.MaxValue UTF-8 bytes names 'value'", fromString?.ToString() ?? "returned normally");
    }

    private static ArgumentOutOfRangeException? CatchOutOfRange(Action action)
    {
        try
        {
            action();
            return null;
        }
        catch (ArgumentOutOfRangeException e)
        {
            return e;
        }
    }
}
