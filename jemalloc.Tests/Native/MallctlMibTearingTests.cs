namespace jemalloc.Tests.Native;

/// <summary>
/// A <see cref="MallctlMib{T}"/> copied while another thread assigns a different one is always one
/// whole MIB: its name (which the mallctl policy checks) and its components (which the call uses)
/// never come from two keys, so a racy copy cannot run a refused key under an allowed name.
/// </summary>
public sealed class MallctlMibTearingTests
{
    [Fact]
    public void A_copy_racing_an_assignment_is_always_one_whole_MIB()
    {
        MallctlMib<nuint> allocated = MallctlKeys.Stats.Allocated.ToMib();
        MallctlMib<nuint> active = MallctlKeys.Stats.Active.ToMib();
        Assert.False(allocated.Components.SequenceEqual(active.Components));
        var shared = new MallctlMib<nuint>[1];
        shared[0] = allocated;
        long torn = 0, sawAllocated = 0, sawActive = 0;
        bool done = false;
        Exception? failure = null;

        var reader = new Thread(() =>
        {
            try
            {
                while (!Volatile.Read(ref done))
                {
                    MallctlMib<nuint> copy = shared[0];
                    MallctlMib<nuint> expected = copy.Name == allocated.Name ? allocated : active;
                    if (!copy.Components.SequenceEqual(expected.Components))
                    {
                        torn++;
                    }
                    else if (copy.Name == allocated.Name)
                    {
                        sawAllocated++;
                    }
                    else
                    {
                        sawActive++;
                    }
                }
            }
            catch (Exception e)
            {
                failure = e;
            }
        });
        reader.Start();
        for (int i = 0; i < 20_000_000 && (torn == 0 || sawActive == 0 || sawAllocated == 0 || i < 2_000_000); i++)
        {
            shared[0] = (i & 1) == 0 ? active : allocated;
        }

        Volatile.Write(ref done, true);
        Assert.True(reader.Join(TimeSpan.FromSeconds(60)), "The reader did not stop.");
        Assert.Null(failure);
        Assert.True(sawAllocated > 0 && sawActive > 0, $"The reader saw both MIBs (allocated {sawAllocated}, active {sawActive}): the race happened.");
        Assert.Equal(0, torn);
    }

    [Fact]
    public void A_default_MIB_says_it_is_default_instead_of_failing_inside()
    {
        MallctlMib<nuint> empty = default;
        Assert.True(empty.Components.IsEmpty);
        Assert.Contains("default", Assert.Throws<MallctlException>(() => empty.Get()).Message, StringComparison.Ordinal);
        Assert.Contains("default", Assert.Throws<MallctlException>(() => empty.Set(1)).Message, StringComparison.Ordinal);
        Assert.Contains("default", Assert.Throws<MallctlException>(empty.Run).Message, StringComparison.Ordinal);
        Assert.Equal("position", Assert.Throws<ArgumentOutOfRangeException>(() => empty.WithIndex(0, 1)).ParamName);
        Assert.Equal(string.Empty, empty.ToString());
    }
}
