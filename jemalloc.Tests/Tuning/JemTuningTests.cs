using jemalloc.Tests.Support;

namespace jemalloc.Tests.Tuning;

[Collection(GlobalSettings.Name)]
public sealed unsafe class JemTuningTests
{
    [Fact]
    public void Background_thread_is_read_back_after_it_is_set()
    {
        if (OperatingSystem.IsWindows())
        {
            // jemalloc has no background threads on Windows: both ways say so by the key's name.
            Assert.Equal(MallctlError.NotFound, Assert.Throws<MallctlException>(() => JemTuning.BackgroundThread).Error);
            var refused = Assert.Throws<MallctlException>(() => JemTuning.BackgroundThread = true);
            Assert.Equal(("background_thread", MallctlError.NotFound), (refused.Name, refused.Error));
            return;
        }

        bool old = JemTuning.BackgroundThread;
        try
        {
            JemTuning.BackgroundThread = !old;
            Assert.Equal(!old, JemTuning.BackgroundThread);
            Assert.Equal(!old, MallctlKeys.BackgroundThread.Get());
            JemTuning.BackgroundThread = old;
            Assert.Equal(old, JemTuning.BackgroundThread);
        }
        finally
        {
            JemTuning.BackgroundThread = old;
        }
    }

    [Fact]
    public void Max_background_threads_is_read_back_after_it_is_set()
    {
        if (OperatingSystem.IsWindows())
        {
            // No background threads on Windows (see above); zero is still refused before jemalloc is asked.
            Assert.Equal(MallctlError.NotFound, Assert.Throws<MallctlException>(() => JemTuning.MaxBackgroundThreads).Error);
            var refused = Assert.Throws<MallctlException>(() => JemTuning.MaxBackgroundThreads = 1);
            Assert.Equal(("max_background_threads", MallctlError.NotFound), (refused.Name, refused.Error));
            Assert.Throws<ArgumentOutOfRangeException>(() => JemTuning.MaxBackgroundThreads = 0);
            return;
        }

        int old = JemTuning.MaxBackgroundThreads;
        try
        {
            JemTuning.MaxBackgroundThreads = 1;
            Assert.Equal(1, JemTuning.MaxBackgroundThreads);
            Assert.Throws<ArgumentOutOfRangeException>(() => JemTuning.MaxBackgroundThreads = 0);
            Assert.Equal(1, JemTuning.MaxBackgroundThreads);
        }
        finally
        {
            JemTuning.MaxBackgroundThreads = old;
        }

        Assert.Equal(old, JemTuning.MaxBackgroundThreads);
    }

    [Fact]
    public void Default_decay_times_are_read_back_and_given_to_new_arenas()
    {
        long oldDirty = JemTuning.DefaultDirtyDecayMilliseconds;
        long oldMuzzy = JemTuning.DefaultMuzzyDecayMilliseconds;
        try
        {
            JemTuning.DefaultDirtyDecayMilliseconds = 1234;
            JemTuning.DefaultMuzzyDecayMilliseconds = -1;
            Assert.Equal(1234, JemTuning.DefaultDirtyDecayMilliseconds);
            Assert.Equal(-1, JemTuning.DefaultMuzzyDecayMilliseconds);
            using var arena = new JemArena();
            Assert.Equal(1234, arena.DirtyDecayMilliseconds);
            Assert.Equal(-1, arena.MuzzyDecayMilliseconds);
            Assert.Throws<ArgumentOutOfRangeException>(() => JemTuning.DefaultDirtyDecayMilliseconds = -2);
            Assert.Throws<ArgumentOutOfRangeException>(() => JemTuning.DefaultMuzzyDecayMilliseconds = -2);
        }
        finally
        {
            JemTuning.DefaultDirtyDecayMilliseconds = oldDirty;
            JemTuning.DefaultMuzzyDecayMilliseconds = oldMuzzy;
        }

        Assert.Equal(oldDirty, JemTuning.DefaultDirtyDecayMilliseconds);
        Assert.Equal(oldMuzzy, JemTuning.DefaultMuzzyDecayMilliseconds);
    }

    [Fact]
    public void Per_arena_decay_times_are_read_back_after_they_are_set()
    {
        long oldDirty = JemTuning.GetDirtyDecayMilliseconds(0);
        long oldMuzzy = JemTuning.GetMuzzyDecayMilliseconds(0);
        try
        {
            JemTuning.SetDirtyDecayMilliseconds(0, 2500);
            JemTuning.SetMuzzyDecayMilliseconds(0, 0);
            Assert.Equal(2500, JemTuning.GetDirtyDecayMilliseconds(0));
            Assert.Equal(0, JemTuning.GetMuzzyDecayMilliseconds(0));
            Assert.Equal(2500, MallctlKeys.Arena(0).DirtyDecayMs.Get());
            Assert.Throws<ArgumentOutOfRangeException>(() => JemTuning.SetDirtyDecayMilliseconds(0, -5));
            Assert.Throws<MallctlException>(() => JemTuning.SetDirtyDecayMilliseconds(MallctlKeys.AllArenas - 1, 100));
        }
        finally
        {
            JemTuning.SetDirtyDecayMilliseconds(0, oldDirty);
            JemTuning.SetMuzzyDecayMilliseconds(0, oldMuzzy);
        }

        Assert.Equal(oldDirty, JemTuning.GetDirtyDecayMilliseconds(0));
    }

    [Fact]
    public void Decay_for_all_arenas_reaches_every_initialized_arena_and_the_default()
    {
        using var created = new JemArena();
        MallctlKeys.Epoch.Set(1); // refreshes arena.<i>.initialized
        uint count = JemTuning.ArenaCount;
        var initialized = Enumerable.Range(0, (int)count).Select(i => (uint)i).Where(i => MallctlKeys.Arena(i).Initialized.Get()).ToList();
        var old = initialized.ToDictionary(i => i, i => (Dirty: JemTuning.GetDirtyDecayMilliseconds(i), Muzzy: JemTuning.GetMuzzyDecayMilliseconds(i)));
        long oldDefaultDirty = JemTuning.DefaultDirtyDecayMilliseconds;
        long oldDefaultMuzzy = JemTuning.DefaultMuzzyDecayMilliseconds;
        try
        {
            int changed = JemTuning.SetDecayForAllArenas(7000, null);

            Assert.Equal(initialized.Count, changed);
            Assert.Contains(created.Index, initialized);
            Assert.All(initialized, i => Assert.Equal(7000, JemTuning.GetDirtyDecayMilliseconds(i)));
            Assert.All(initialized, i => Assert.Equal(old[i].Muzzy, JemTuning.GetMuzzyDecayMilliseconds(i)));
            Assert.Equal(7000, JemTuning.DefaultDirtyDecayMilliseconds);
            Assert.Equal(oldDefaultMuzzy, JemTuning.DefaultMuzzyDecayMilliseconds);
            Assert.Throws<ArgumentOutOfRangeException>(() => JemTuning.SetDecayForAllArenas(null, -3));
        }
        finally
        {
            foreach (var (arena, (dirty, muzzy)) in old)
            {
                JemTuning.SetDirtyDecayMilliseconds(arena, dirty);
                JemTuning.SetMuzzyDecayMilliseconds(arena, muzzy);
            }

            JemTuning.DefaultDirtyDecayMilliseconds = oldDefaultDirty;
            JemTuning.DefaultMuzzyDecayMilliseconds = oldDefaultMuzzy;
        }
    }

    [Fact]
    public void Thread_arena_is_read_back_after_it_is_set_and_checked()
    {
        using var arena = new JemArena();
        RunOnNewThread(() =>
        {
            uint old = JemTuning.ThreadArena;
            uint other = old == 0 ? 1u : 0u;
            JemTuning.ThreadArena = other;
            Assert.Equal(other, JemTuning.ThreadArena);
            Assert.Equal(other, MallctlKeys.Thread.Arena.Get());

            Assert.Throws<ArgumentOutOfRangeException>(() => JemTuning.ThreadArena = JemTuning.ArenaCount);
            Assert.Throws<InvalidOperationException>(() => JemTuning.ThreadArena = arena.Index);
            Assert.Equal(other, JemTuning.ThreadArena);

            JemTuning.ThreadArena = old;
            Assert.Equal(old, JemTuning.ThreadArena);
        });
    }

    [Fact]
    public void Thread_cache_enabled_is_read_back_after_it_is_set()
    {
        RunOnNewThread(() =>
        {
            bool old = JemTuning.ThreadCacheEnabled;
            JemTuning.ThreadCacheEnabled = !old;
            Assert.Equal(!old, JemTuning.ThreadCacheEnabled);
            JemTuning.ThreadCacheEnabled = old;
            Assert.Equal(old, JemTuning.ThreadCacheEnabled);
        });
    }

    [Fact]
    public void Flushing_the_thread_cache_returns_its_objects_to_the_arena()
    {
        RunOnNewThread(() =>
        {
            var blocks = Enumerable.Range(0, 200).Select(_ => (nint)Jem.Malloc(256)).ToList();
            blocks.ForEach(block => Jem.Free((void*)block));
            long cached = ThreadCacheBytes();
            Assert.True(cached >= 256);

            JemTuning.FlushThreadCache();

            Assert.True(ThreadCacheBytes() <= cached - 256 * 10);
        });
    }

    [Fact]
    public void Flushing_a_thread_cache_that_is_off_says_so()
    {
        RunOnNewThread(() =>
        {
            JemTuning.ThreadCacheEnabled = false;
            try
            {
                var exception = Assert.Throws<InvalidOperationException>(JemTuning.FlushThreadCache);
                Assert.Contains("ThreadCacheEnabled is false", exception.Message, StringComparison.Ordinal);
                Assert.Equal(MallctlError.Fault, Assert.IsType<MallctlException>(exception.InnerException).Error);
            }
            finally
            {
                JemTuning.ThreadCacheEnabled = true;
            }

            // On again, the flush works.
            JemTuning.FlushThreadCache();
        });
    }

    // jemalloc's limit: NSTIME_SEC_MAX (18,446,744,072) seconds in milliseconds.
    private const long MaxDecayMilliseconds = 18_446_744_072_000;

    [Fact]
    public void Decay_times_beyond_jemallocs_limit_are_out_of_range_and_change_nothing()
    {
        using var arena = new JemArena();
        long oldDefault = JemTuning.DefaultDirtyDecayMilliseconds;
        long oldArena = arena.DirtyDecayMilliseconds;
        foreach (long tooLong in new[] { MaxDecayMilliseconds + 1, long.MaxValue })
        {
            var exception = Assert.Throws<ArgumentOutOfRangeException>(() => JemTuning.DefaultDirtyDecayMilliseconds = tooLong);
            Assert.Equal("value", exception.ParamName);
            Assert.Equal(tooLong, exception.ActualValue);
            Assert.Contains("up to 18446744072000 milliseconds", exception.Message, StringComparison.Ordinal);
            Assert.Throws<ArgumentOutOfRangeException>(() => JemTuning.DefaultMuzzyDecayMilliseconds = tooLong);
            Assert.Equal("milliseconds", Assert.Throws<ArgumentOutOfRangeException>(() => JemTuning.SetDirtyDecayMilliseconds(arena.Index, tooLong)).ParamName);
            Assert.Throws<ArgumentOutOfRangeException>(() => JemTuning.SetMuzzyDecayMilliseconds(arena.Index, tooLong));
            Assert.Equal("muzzyMilliseconds", Assert.Throws<ArgumentOutOfRangeException>(() => JemTuning.SetDecayForAllArenas(1000, tooLong)).ParamName);
            Assert.Equal(nameof(JemArena.DirtyDecayMilliseconds), Assert.Throws<ArgumentOutOfRangeException>(() => arena.DirtyDecayMilliseconds = tooLong).ParamName);
        }

        // SetDecayForAllArenas checked both values before it changed anything.
        Assert.Equal(oldDefault, JemTuning.DefaultDirtyDecayMilliseconds);
        Assert.Equal(oldArena, arena.DirtyDecayMilliseconds);

        // The limit itself is a decay time jemalloc takes.
        arena.DirtyDecayMilliseconds = MaxDecayMilliseconds;
        Assert.Equal(MaxDecayMilliseconds, arena.DirtyDecayMilliseconds);
        JemTuning.SetMuzzyDecayMilliseconds(arena.Index, MaxDecayMilliseconds);
        Assert.Equal(MaxDecayMilliseconds, JemTuning.GetMuzzyDecayMilliseconds(arena.Index));
    }

    [Fact]
    public void Purge_returns_dirty_pages_and_decay_keeps_those_decay_says_to_keep()
    {
        using var arena = new JemArena { DirtyDecayMilliseconds = -1, MuzzyDecayMilliseconds = -1 };
        DirtyFourMiB(arena);
        JemTuning.Decay(arena.Index);
        JemTuning.DecayAll();
        Assert.True(arena.GetStatistics().DirtyBytes >= 4 << 20);

        JemTuning.Purge(arena.Index);
        Assert.Equal(0, arena.GetStatistics().DirtyBytes);

        DirtyFourMiB(arena);
        JemTuning.PurgeAll();
        Assert.Equal(0, arena.GetStatistics().DirtyBytes);
        Assert.Throws<MallctlException>(() => JemTuning.Purge(MallctlKeys.AllArenas - 1));
    }

    private static void DirtyFourMiB(JemArena arena)
    {
        void* memory = arena.Allocate(4 << 20);
        new Span<byte>(memory, 4 << 20).Fill(1);
        arena.Free(memory);
    }

    private static long ThreadCacheBytes()
    {
        MallctlKeys.Epoch.Set(1);
        return (long)Jem.GetMallctl<nuint>("stats.arenas.4096.tcache_bytes");
    }

    private static void RunOnNewThread(Action action) => Workers.RunOne(action);
}
