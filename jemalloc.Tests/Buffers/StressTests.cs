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
        var buffers = new FixedBuffer<long>[BufferCount];
        for (int i = 0; i < BufferCount; i++)
        {
            buffers[i] = new FixedBuffer<long>(64 + i, new AllocationOptions(MallocxFlags.NoThreadCache));
            buffers[i].Fill(Pattern(i));
        }

        int[] freedBy = new int[BufferCount];
        int corruptions = 0;
        int unexpected = 0;
        RunThreads(seed =>
        {
            var random = new Random(seed);
            for (int n = 0; n < Iterations; n++)
            {
                int i = random.Next(BufferCount);
                FixedBuffer<long> buffer = buffers[i];
                try
                {
                    if (random.Next(50) == 0)
                    {
                        buffer.Free();
                        if (Interlocked.Increment(ref freedBy[i]) != 1)
                        {
                            Interlocked.Increment(ref unexpected);
                        }

                        continue;
                    }

                    buffer.Acquire();
                    try
                    {
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
                    }
                    finally
                    {
                        buffer.Release();
                    }
                }
                catch (InvalidOperationException)
                {
                    // Freed already (ObjectDisposedException), or acquired by another thread: both expected.
                }
                catch (Exception)
                {
                    Interlocked.Increment(ref unexpected);
                    throw;
                }
            }
        });

        Assert.Equal(0, corruptions);
        Assert.Equal(0, unexpected);
        for (int i = 0; i < BufferCount; i++)
        {
            Assert.Equal(freedBy[i] == 0, buffers[i].IsValid);
            if (buffers[i].IsValid)
            {
                Assert.Equal(0, buffers[i].AcquireCount);
                buffers[i].Free();
            }
        }
    }

    [Fact]
    public void Shared_SafeArrays_survive_concurrent_acquire_read_release_and_dispose()
    {
        var arrays = new SafeArray<int>[BufferCount];
        for (int i = 0; i < BufferCount; i++)
        {
            arrays[i] = new SafeArray<int>(100 + i, new AllocationOptions(MallocxFlags.NoThreadCache));
            arrays[i].Fill(i);
        }

        int corruptions = 0;
        int disposals = 0;
        RunThreads(seed =>
        {
            var random = new Random(seed);
            for (int n = 0; n < Iterations; n++)
            {
                int i = random.Next(BufferCount);
                SafeArray<int> array = arrays[i];
                try
                {
                    if (random.Next(50) == 0)
                    {
                        bool wasValid = array.IsValid;
                        array.Dispose();
                        if (wasValid && !array.IsValid)
                        {
                            Interlocked.Increment(ref disposals);
                        }

                        continue;
                    }

                    array.Acquire();
                    try
                    {
                        if (array.ToArray().AsSpan().ContainsAnyExcept(i) || array[array.Length - 1] != i)
                        {
                            Interlocked.Increment(ref corruptions);
                        }
                    }
                    finally
                    {
                        array.Release();
                    }
                }
                catch (InvalidOperationException)
                {
                    // Disposed already, or acquired by another thread while disposing: both expected.
                }
            }
        });

        Assert.Equal(0, corruptions);
        Assert.True(disposals > 0);
        foreach (SafeArray<int> array in arrays)
        {
            Assert.True(array.AcquireCount <= 0);
            array.Dispose();
        }
    }

    private static long Pattern(int index) => (0x5A5A_0000_0000L | (long)index) * 31;

    private static void RunThreads(Action<int> body)
    {
        Exception? failure = null;
        var threads = Enumerable.Range(0, Threads).Select(t => new Thread(() =>
        {
            try
            {
                body(1000 + t);
            }
            catch (Exception e)
            {
                Interlocked.CompareExchange(ref failure, e, null);
            }
        })).ToList();
        threads.ForEach(t => t.Start());
        threads.ForEach(t => t.Join());
        Assert.Null(failure);
    }
}
