using jemalloc.Tests.Support;

// The 2018 names (Jem.GetMallCtlInt32, ...) are obsolete but must keep working: these tests prove they do.
#pragma warning disable CS0618

namespace jemalloc.Tests.Native;

public unsafe class MallctlTests
{
    // One arena of our own, so writes to arena.<i>.* settings cannot disturb other tests.
    private static readonly Lazy<uint> OwnArena = new(() => MallctlKeys.Arenas.Create.Get());

    [Fact]
    public void Bool_keys_read_and_write_one_byte()
    {
        bool original = Jem.GetMallctl<bool>("thread.tcache.enabled");
        try
        {
            Jem.SetMallctl("thread.tcache.enabled", false);
            Assert.False(MallctlKeys.Thread.TcacheEnabled.Get());
            Assert.False(Jem.ExchangeMallctl("thread.tcache.enabled", true));
            Assert.True(Jem.GetMallCtlBool("thread.tcache.enabled"));
            Jem.SetMallCtlBool("thread.tcache.enabled", false);
            Assert.False(Jem.GetMallctl<bool>("thread.tcache.enabled"));
        }
        finally
        {
            MallctlKeys.Thread.TcacheEnabled.Set(original);
        }
    }

    [Fact]
    public void Unsigned_keys_read_and_write_as_uint_and_int()
    {
        uint original = Jem.GetMallCtlUInt32("thread.arena");
        try
        {
            Jem.SetMallCtlUInt32("thread.arena", OwnArena.Value);
            Assert.Equal(OwnArena.Value, MallctlKeys.Thread.Arena.Get());
            Jem.SetMallCtlInt32("thread.arena", (int)original);
            Assert.Equal((int)original, Jem.GetMallCtlInt32("thread.arena"));
        }
        finally
        {
            MallctlKeys.Thread.Arena.Set(original);
        }

        Assert.Equal(Jem.GetMallctl<uint>("opt.narenas"), (uint)Jem.GetMallCtlInt32("opt.narenas"));
        Assert.True(Jem.ArenaCount > OwnArena.Value);
    }

    [Fact]
    public void Uint64_keys_read_and_write_as_ulong_and_long()
    {
        ulong epoch = Jem.GetMallCtlUInt64("epoch");
        Jem.SetMallCtlUInt64("epoch", 1);
        Assert.True(Jem.GetMallctl<ulong>("epoch") > epoch);
        Jem.SetMallCtlInt64("epoch", 1);
        Assert.True(MallctlKeys.Epoch.Get() > epoch + 1);

        ulong before = MallctlKeys.Thread.Allocated.Get();
        void* memory = Jem.Malloc(1000);
        Assert.True(Jem.GetMallCtlUInt64("thread.allocated") >= before + 1000);
        Jem.Free(memory);

        // opt.mutex_max_spin is an int64_t.
        Assert.Equal(Jem.GetMallctl<long>("opt.mutex_max_spin"), Jem.GetMallCtlInt64("opt.mutex_max_spin"));
    }

    [Fact]
    public void Size_t_keys_read_and_write_as_nuint()
    {
        nuint page = Jem.GetMallCtlSizeT("arenas.page");
        Assert.Equal(Jem.PageSize, page);
        Assert.True(page >= 4096 && nuint.IsPow2(page));
        Assert.True(MallctlKeys.Arenas.Page.Get() >= (nuint)Environment.SystemPageSize);

        Assert.Equal(MallctlError.NotPermitted, Assert.Throws<MallctlException>(() => Jem.SetMallCtlSizeT("arenas.page", page)).Error);
        if (OperatingSystem.IsWindows())
        {
            // jemalloc has no background threads on Windows, so it has no writable size_t key at all:
            // the one it has elsewhere is reported as missing, by name.
            var missing = Assert.Throws<MallctlException>(() => Jem.SetMallCtlSizeT("max_background_threads", 1));
            Assert.Equal(MallctlError.NotFound, missing.Error);
            Assert.Equal("max_background_threads", missing.Name);
            return;
        }

        nuint maxThreads = Jem.GetMallCtlSizeT("max_background_threads");
        Jem.SetMallCtlSizeT("max_background_threads", maxThreads);
        Assert.Equal(maxThreads, Jem.ExchangeMallctl<nuint>("max_background_threads", maxThreads));
    }

    [Fact]
    public void Ssize_t_keys_read_and_write_as_nint()
    {
        string key = $"arena.{OwnArena.Value}.dirty_decay_ms";
        Jem.SetMallCtlSSizeT(key, 1234);
        Assert.Equal(1234, Jem.GetMallCtlSSizeT(key));
        MallctlKeys.Arena(OwnArena.Value).DirtyDecayMs.Set(-1);
        Assert.Equal(-1, Jem.GetMallctl<nint>(key));
        Assert.Equal(-1, Jem.ExchangeMallctl<nint>(key, 10_000));
        Assert.Equal(10_000, MallctlKeys.Arena(OwnArena.Value).DirtyDecayMs.Get());
    }

    [Fact]
    public void String_keys_read_and_write()
    {
        Assert.StartsWith("5.3.0-", Jem.GetMallctlString("version"), StringComparison.Ordinal);
        Assert.Equal(Jem.Version, Jem.GetMallCtlString("version"));
        Assert.Equal(Jem.Version, MallctlKeys.Version.Get());

        string key = $"arena.{OwnArena.Value}.dss";
        string current = Jem.GetMallctlString(key)!;
        Jem.SetMallctlString(key, "disabled");
        Assert.Equal("disabled", Jem.GetMallCtlString(key));
        Jem.SetMallCtlString(key, current);
        Assert.Equal(current, new MallctlKey<string>(key).Get());
    }

    [Fact]
    public void Thread_cache_flush_commands_empty_the_calling_threads_cache()
    {
        // On a new thread bound to our own arena, so its cache is the only one counted for that arena.
        Workers.RunOne(() =>
        {
            MallctlKeys.Thread.Arena.Set(OwnArena.Value);
            foreach (Action flush in new Action[] { () => Jem.MallctlCommand("thread.tcache.flush"), MallctlKeys.Thread.TcacheFlush.Run })
            {
                var blocks = Enumerable.Range(0, 50).Select(_ => (nint)Jem.Malloc(256)).ToList();
                blocks.ForEach(block => Jem.Free((void*)block));
                Assert.True(OwnArenaThreadCacheBytes() >= 256, "The freed blocks should wait in the thread cache.");

                flush();

                Assert.Equal(0, OwnArenaThreadCacheBytes());
            }
        });
        Assert.Equal("thread.tcache.flush", MallctlKeys.Thread.TcacheFlush.ToString());
    }

    [Fact]
    public void Arena_purge_command_returns_the_dirty_pages()
    {
        ArenaKeys arena = MallctlKeys.Arena(OwnArena.Value);
        nint decay = arena.DirtyDecayMs.Get();
        arena.DirtyDecayMs.Set(-1);
        try
        {
            DirtyFourMiBInOwnArena();
            Assert.True(OwnArenaDirtyPages() >= (nuint)(4 << 20) / Jem.PageSize);

            arena.Purge.Run();

            Assert.Equal(0u, OwnArenaDirtyPages());
        }
        finally
        {
            arena.DirtyDecayMs.Set(decay);
        }
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void Arena_decay_command_purges_the_dirty_pages_whose_decay_time_passed(bool allArenas)
    {
        // Proven by the arena's statistics at points where jemalloc's decay state is known, never by
        // racing a short decay time (an emulator can take longer than it between two calls). jemalloc
        // counts freed pages into its decay backlog only when a decay call advances its epoch, and
        // restarts that backlog whenever the decay time is set: pages it has not counted yet are kept
        // by the next decay call however late it comes, and pages counted once are purged by a decay
        // call made a whole decay time later.
        ArenaKeys arena = MallctlKeys.Arena(OwnArena.Value);
        nint decay = arena.DirtyDecayMs.Get();
        nuint fourMiBOfPages = (nuint)(4 << 20) / Jem.PageSize;
        try
        {
            // No background thread purges behind the test's back: only the decay commands do. (jemalloc
            // built for Windows has no background threads at all, so no background_thread key.)
            if (!OperatingSystem.IsWindows())
            {
                Assert.False(Jem.GetMallctl<bool>("background_thread"));
            }

            MallctlCommand decayCommand = allArenas ? new MallctlCommand($"arena.{MallctlKeys.AllArenas}.decay") : arena.Decay;

            // A decay time of a day has not passed for pages freed just now: the command keeps them.
            arena.DirtyDecayMs.Set((nint)TimeSpan.FromDays(1).TotalMilliseconds);
            DirtyFourMiBInOwnArena();
            ulong purgedBefore = OwnArenaPurgedPages();
            decayCommand.Run();
            Assert.True(OwnArenaDirtyPages() >= fourMiBOfPages);
            Assert.Equal(purgedBefore, OwnArenaPurgedPages());

            // 100 ms from now on; the restarted backlog has not counted these pages, so this command
            // (made once jemalloc's clock has passed the first of the 200 steps of 0.5 ms) counts them
            // as freed now and keeps them.
            arena.DirtyDecayMs.Set(100);
            Thread.Sleep(50);
            decayCommand.Run();
            Assert.True(OwnArenaDirtyPages() >= fourMiBOfPages);

            // More than the decay time later: nothing purges without a command...
            Thread.Sleep(400);
            Assert.True(OwnArenaDirtyPages() >= fourMiBOfPages);
            Assert.Equal(purgedBefore, OwnArenaPurgedPages());

            // ...and the command purges them all.
            decayCommand.Run();

            Assert.Equal(0u, OwnArenaDirtyPages());
            Assert.True(OwnArenaPurgedPages() - purgedBefore >= fourMiBOfPages);
        }
        finally
        {
            arena.DirtyDecayMs.Set(decay);
        }
    }

    private static void DirtyFourMiBInOwnArena()
    {
        var flags = MallocxFlags.Arena(OwnArena.Value) | MallocxFlags.NoThreadCache;
        void* memory = Jem.Mallocx(4 << 20, flags);
        new Span<byte>(memory, 4 << 20).Fill(1);
        Jem.Dallocx(memory, flags);
    }

    private static nuint OwnArenaDirtyPages()
    {
        MallctlKeys.Epoch.Set(1);
        return MallctlKeys.Arena(OwnArena.Value).DirtyPages.Get();
    }

    private static ulong OwnArenaPurgedPages()
    {
        MallctlKeys.Epoch.Set(1);
        return MallctlKeys.Arena(OwnArena.Value).DirtyPurged.Get();
    }

    private static long OwnArenaThreadCacheBytes()
    {
        MallctlKeys.Epoch.Set(1);
        return (long)Jem.GetMallctl<nuint>($"stats.arenas.{OwnArena.Value}.tcache_bytes");
    }

    [Fact]
    public void An_unknown_key_names_the_key_and_the_error()
    {
        var exception = Assert.Throws<MallctlException>(() => Jem.GetMallctl<ulong>("no.such.key"));
        Assert.Equal("no.such.key", exception.Name);
        Assert.Equal(MallctlError.NotFound, exception.Error);
        Assert.Contains("'no.such.key'", exception.Message, StringComparison.Ordinal);
        Assert.Contains("ENOENT", exception.Message, StringComparison.Ordinal);

        Assert.Equal(MallctlError.NotFound, Assert.Throws<MallctlException>(() => Jem.SetMallctl("no.such.key", 1u)).Error);
        Assert.Equal(MallctlError.NotFound, Assert.Throws<MallctlException>(() => Jem.MallctlCommand("no.such.command")).Error);
        Assert.Equal(MallctlError.NotFound, Assert.Throws<MallctlException>(() => Jem.MallctlNameToMib<uint>("no.such.key")).Error);
        Assert.Equal(MallctlError.NotFound, Assert.Throws<MallctlException>(() => Jem.GetMallCtlInt32("opt.nonexistent")).Error);
    }

    [Fact]
    public void A_wrong_value_size_is_reported_with_the_type_used()
    {
        // config.debug is a C bool: one byte, not four.
        var exception = Assert.Throws<MallctlException>(() => Jem.GetMallctl<uint>("config.debug"));
        Assert.Equal(MallctlError.InvalidValue, exception.Error);
        Assert.Contains("UInt32 (4 bytes)", exception.Message, StringComparison.Ordinal);

        Assert.Equal(MallctlError.InvalidValue, Assert.Throws<MallctlException>(() => Jem.GetMallCtlBool("arenas.page")).Error);
        Assert.Equal(MallctlError.InvalidValue, Assert.Throws<MallctlException>(() => Jem.SetMallCtlInt32("epoch", 1)).Error);
        Assert.Equal(MallctlError.InvalidValue, Assert.Throws<MallctlException>(() => new MallctlKey<bool>("epoch").Get()).Error);
    }

    [Fact]
    public void Writing_a_read_only_key_is_not_permitted()
    {
        var exception = Assert.Throws<MallctlException>(() => Jem.SetMallctl("opt.narenas", 4u));
        Assert.Equal(MallctlError.NotPermitted, exception.Error);
        Assert.Equal("opt.narenas", exception.Name);
        Assert.Contains("read-only", exception.Message, StringComparison.Ordinal);
        Assert.Equal(MallctlError.NotPermitted, Assert.Throws<MallctlException>(() => MallctlKeys.Arenas.Page.Set(8192)).Error);
        Assert.Equal(MallctlError.NotPermitted, Assert.Throws<MallctlException>(() => Jem.SetMallctlString("version", "6")).Error);
    }

    [Fact]
    public void A_type_that_is_no_mallctl_type_is_not_supported()
    {
        Assert.Throws<NotSupportedException>(() => Jem.GetMallctl<Guid>("epoch"));
        Assert.Throws<NotSupportedException>(() => Jem.SetMallctl("epoch", (short)1));
        Assert.Throws<NotSupportedException>(() => Jem.ExchangeMallctl("epoch", 1.0));
        Assert.Throws<NotSupportedException>(() => new MallctlKey<decimal>("epoch").Get());
        Assert.Throws<NotSupportedException>(() => new MallctlKey<DateTime>("epoch").Set(DateTime.Now));
        Assert.Throws<NotSupportedException>(() => Jem.MallctlNameToMib<Guid>("epoch").Get());
    }

    [Fact]
    public void String_access_to_a_key_that_is_not_a_string_is_refused_before_jemalloc_is_asked()
    {
        // Reading epoch as a string would make .NET dereference a number.
        var exception = Assert.Throws<MallctlException>(() => Jem.GetMallctlString("epoch"));
        Assert.Equal(MallctlError.InvalidValue, exception.Error);
        Assert.Contains("not a string", exception.Message, StringComparison.Ordinal);
        Assert.Throws<MallctlException>(() => Jem.SetMallctlString("arenas.page", "x"));
        Assert.Throws<MallctlException>(() => new MallctlKey<string>("arenas.narenas").Get());
        Assert.Throws<MallctlException>(() => Jem.MallctlNameToMib<string>("stats.allocated").Get());
        Assert.Throws<ArgumentNullException>(() => Jem.SetMallctlString("arena.0.dss", null!));
        Assert.Throws<ArgumentException>(() => Jem.GetMallctl<uint>(""));
    }

    [Fact]
    public void A_mib_is_looked_up_once_and_reused_for_other_indexes()
    {
        MallctlMib<nint> arenaZero = Jem.MallctlNameToMib<nint>("arena.0.dirty_decay_ms");
        Assert.Equal(3, arenaZero.Components.Length);
        Assert.Equal("arena.0.dirty_decay_ms", arenaZero.ToString());

        MallctlMib<nint> own = arenaZero.WithIndex(1, OwnArena.Value);
        Assert.Equal((nuint)0, arenaZero.Components[1]);
        for (int i = 0; i < 100; i++)
        {
            own.Set(2000 + i);
            Assert.Equal(2000 + i, own.Get());
        }

        Assert.Equal(2099, MallctlKeys.Arena(OwnArena.Value).DirtyDecayMs.Get());
        Assert.Equal(Jem.GetMallctl<nint>("arena.0.dirty_decay_ms"), arenaZero.Get());

        MallctlMib<uint> purge = Jem.MallctlNameToMib<uint>(MallctlKeys.Arena(0).Purge.Name);
        purge.WithIndex(1, OwnArena.Value).Run();
        Assert.Throws<ArgumentOutOfRangeException>(() => own.WithIndex(3, 0));
        Assert.Throws<ArgumentOutOfRangeException>(() => own.WithIndex(-1, 0));
        Assert.Equal(MallctlError.NotFound, Assert.Throws<MallctlException>(() => arenaZero.WithIndex(1, 100_000).Get()).Error);
    }

    [Fact]
    public void Typed_keys_make_mibs_of_every_type()
    {
        Assert.Equal(MallctlKeys.Version.Get(), MallctlKeys.Version.ToMib().Get());
        Assert.Equal(MallctlKeys.Arenas.Page.Get(), MallctlKeys.Arenas.Page.ToMib().Get());
        Assert.Equal(MallctlKeys.Config.Stats.Get(), MallctlKeys.Config.Stats.ToMib().Get());
        Assert.Equal(MallctlKeys.Opt.Narenas.Get(), MallctlKeys.Opt.Narenas.ToMib().Get());

        MallctlMib<ulong> epoch = MallctlKeys.Epoch.ToMib();
        ulong before = epoch.Get();
        epoch.Set(1);
        Assert.True(epoch.Get() > before);
        Assert.Equal(MallctlError.NotPermitted, Assert.Throws<MallctlException>(() => MallctlKeys.Opt.Narenas.ToMib().Set(1)).Error);
        Assert.Equal(MallctlError.InvalidValue, Assert.Throws<MallctlException>(() => new MallctlKey<uint>("epoch").ToMib().Get()).Error);

        MallctlMib<string> dss = new MallctlKey<string>($"arena.{OwnArena.Value}.dss").ToMib();
        string current = dss.Get();
        dss.Set("disabled");
        Assert.Equal("disabled", dss.Get());
        dss.Set(current);
    }

    [Fact]
    public void The_raw_functions_return_jemalloc_error_numbers()
    {
        uint narenas = 0;
        nuint length = sizeof(uint);
        Assert.Equal(0, Jem.Mallctl("opt.narenas", &narenas, &length, null, 0));
        Assert.Equal(Jem.GetMallctl<uint>("opt.narenas"), narenas);
        Assert.Equal(2, Jem.Mallctl("no.such.key", &narenas, &length, null, 0));
        Assert.Equal(1, Jem.Mallctl("opt.narenas", null, null, &narenas, sizeof(uint)));
        length = 1;
        Assert.Equal(22, Jem.Mallctl("opt.narenas", &narenas, &length, null, 0));

        Span<nuint> mib = stackalloc nuint[4];
        Assert.Equal(0, Jem.MallctlNameToMib("arenas.page", mib, out int mibLength));
        Assert.Equal(2, mibLength);
        nuint page = 0;
        nuint pageLength = (nuint)sizeof(nuint);
        Assert.Equal(0, Jem.MallctlByMib(mib[..mibLength], &page, &pageLength, null, 0));
        Assert.Equal(Jem.PageSize, page);
        Assert.Equal(2, Jem.MallctlNameToMib("no.such", mib, out _));
        Assert.Throws<ArgumentException>(() => Jem.MallctlByMib(ReadOnlySpan<nuint>.Empty, null, null, null, 0));
        Assert.Throws<ArgumentException>(() => Jem.MallctlNameToMib("", new nuint[4], out _));
    }
}
