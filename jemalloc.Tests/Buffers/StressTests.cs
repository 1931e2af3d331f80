using jemalloc.Tests.Support;

namespace jemalloc.Tests.Buffers;

/// <summary>
/// Many threads acquiring, reading, releasing and freeing shared structures at once. Every buffer
/// holds a known pattern; a reader that acquired a buffer must always see it intact, and a free must
/// succeed exactly once per buffer and never while another thread holds it.
/// </summary>
[Collection(LeakChecked.Name)]
public sealed class StressTests : LeakCheckedTest
{
    private const int Threads = 6;
    private const int BufferCount = 64;
    private const int Iterations = 4000;

    [Fact]
    public void Shared_FixedBuffers_survive_concurrent_acquire_read_release_and_free()
    {
        long liveBefore = AllocationLedger.LiveCount;
        var buffers = new FixedBuffer<long>[BufferCount];
        for (int i = 0; i < BufferCount; i++)
        {
            buffers[i] = new FixedBuffer<long>(64 + i, new AllocationOptions(MallocxFlags.NoThreadCache));
            buffers[i].Fill(Pattern(i));
        }

        Assert.Equal(liveBefore + BufferCount, AllocationLedger.LiveCount);
        int[] freedBy = new int[BufferCount];
        long corruptions = 0, acquired = 0, released = 0, reads = 0;
        long freeAttempts = 0, freedRefusedInUse = 0, freedAlready = 0, acquireAfterFree = 0;
        Workers.Run(Threads, worker =>
        {
            var random = new Random(1000 + worker);
            for (int n = 0; n < Iterations; n++)
            {
                int i = random.Next(BufferCount);
                FixedBuffer<long> buffer = buffers[i];
                if (random.Next(50) == 0)
                {
                    Interlocked.Increment(ref freeAttempts);
                    try
                    {
                        buffer.Free();
                        Interlocked.Increment(ref freedBy[i]);
                    }
                    catch (ObjectDisposedException e) when (IsFreedMessage(e))
                    {
                        Interlocked.Increment(ref freedAlready);
                    }
                    catch (InvalidOperationException e) when (e is not ObjectDisposedException && IsInUseRefusal(e, "freed"))
                    {
                        Interlocked.Increment(ref freedRefusedInUse);
                    }

                    continue;
                }

                try
                {
                    buffer.Acquire();
                }
                catch (ObjectDisposedException e) when (IsFreedMessage(e))
                {
                    Interlocked.Increment(ref acquireAfterFree);
                    continue;
                }

                Interlocked.Increment(ref acquired);
                try
                {
                    // Acquired: no free can succeed until the Release below, so nothing here may throw.
                    foreach (long value in buffer.ToArray())
                    {
                        if (value != Pattern(i))
                        {
                            Interlocked.Increment(ref corruptions);
                        }
                    }

                    if (!buffer.IsValid || buffer[buffer.Length - 1] != Pattern(i))
                    {
                        Interlocked.Increment(ref corruptions);
                    }

                    Interlocked.Increment(ref reads);
                }
                finally
                {
                    buffer.Release();
                    Interlocked.Increment(ref released);
                }
            }
        });

        Assert.Equal(0, corruptions);
        Assert.Equal(acquired, released);
        Assert.Equal(acquired, reads);
        int freedCount = freedBy.Count(f => f != 0);
        // Every free call ended exactly one way, and a buffer was freed at most once.
        Assert.Equal(freeAttempts, freedCount + freedRefusedInUse + freedAlready);
        Assert.All(freedBy, f => Assert.InRange(f, 0, 1));
        Assert.True(freedCount > 0, "The run should free some buffers (the seeds are fixed).");
        Assert.Equal((long)Threads * Iterations, freeAttempts + acquired + acquireAfterFree);
        Assert.Equal(liveBefore + BufferCount - freedCount, AllocationLedger.LiveCount);
        for (int i = 0; i < BufferCount; i++)
        {
            Assert.Equal(freedBy[i] == 0, buffers[i].IsValid);
            if (buffers[i].IsValid)
            {
                Assert.Equal(0, buffers[i].AcquireCount);
                buffers[i].Free();
            }
        }

        Assert.Equal(liveBefore, AllocationLedger.LiveCount);
    }

    [Fact]
    public void Shared_SafeArrays_survive_concurrent_acquire_read_release_and_dispose()
    {
        long liveBefore = AllocationLedger.LiveCount;
        var arrays = new SafeArray<int>[BufferCount];
        for (int i = 0; i < BufferCount; i++)
        {
            arrays[i] = new SafeArray<int>(100 + i, new AllocationOptions(MallocxFlags.NoThreadCache));
            arrays[i].Fill(i);
        }

        Assert.Equal(liveBefore + BufferCount, AllocationLedger.LiveCount);
        long corruptions = 0, acquired = 0, released = 0, reads = 0;
        long disposeAttempts = 0, disposeReturned = 0, disposeRefusedInUse = 0, stillValidAfterDispose = 0, acquireAfterDispose = 0;
        Workers.Run(Threads, worker =>
        {
            var random = new Random(1000 + worker);
            for (int n = 0; n < Iterations; n++)
            {
                int i = random.Next(BufferCount);
                SafeArray<int> array = arrays[i];
                if (random.Next(50) == 0)
                {
                    Interlocked.Increment(ref disposeAttempts);
                    try
                    {
                        array.Dispose();
                        Interlocked.Increment(ref disposeReturned);
                        // Disposed by this call or an earlier one: either way it is gone once Dispose returns.
                        if (array.IsValid)
                        {
                            Interlocked.Increment(ref stillValidAfterDispose);
                        }
                    }
                    catch (InvalidOperationException e) when (e is not ObjectDisposedException && IsInUseRefusal(e, "disposed"))
                    {
                        Interlocked.Increment(ref disposeRefusedInUse);
                    }

                    continue;
                }

                try
                {
                    array.Acquire();
                }
                catch (ObjectDisposedException)
                {
                    Interlocked.Increment(ref acquireAfterDispose);
                    continue;
                }

                Interlocked.Increment(ref acquired);
                try
                {
                    if (array.ToArray().AsSpan().ContainsAnyExcept(i) || array[array.Length - 1] != i || !array.IsValid)
                    {
                        Interlocked.Increment(ref corruptions);
                    }

                    Interlocked.Increment(ref reads);
                }
                finally
                {
                    array.Release();
                    Interlocked.Increment(ref released);
                }
            }
        });

        Assert.Equal(0, corruptions);
        Assert.Equal(0, stillValidAfterDispose);
        Assert.Equal(acquired, released);
        Assert.Equal(acquired, reads);
        Assert.Equal(disposeAttempts, disposeReturned + disposeRefusedInUse);
        Assert.Equal((long)Threads * Iterations, disposeAttempts + acquired + acquireAfterDispose);
        int disposed = arrays.Count(a => !a.IsValid);
        Assert.True(disposed > 0, "The run should dispose some arrays (the seeds are fixed).");
        // Each disposed array left the ledger exactly once: no double free, no lost entry.
        Assert.Equal(liveBefore + BufferCount - disposed, AllocationLedger.LiveCount);
        foreach (SafeArray<int> array in arrays)
        {
            if (array.IsValid)
            {
                Assert.Equal(0, array.AcquireCount);
            }

            array.Dispose();
            Assert.False(array.IsValid);
        }

        Assert.Equal(liveBefore, AllocationLedger.LiveCount);
    }

    private static bool IsFreedMessage(ObjectDisposedException e) => e.Message.Contains("has been freed", StringComparison.Ordinal);

    /// <summary>The refusal of a free or dispose because another holder has the structure acquired (never an over-release).</summary>
    private static bool IsInUseRefusal(InvalidOperationException e, string verb) =>
        e.Message.Contains($"cannot be {verb}: it is acquired", StringComparison.Ordinal);

    private static long Pattern(int index) => (0x5A5A_0000_0000L | (long)index) * 31;
}
