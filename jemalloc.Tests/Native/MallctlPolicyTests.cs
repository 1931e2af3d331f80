using jemalloc.Tests.Support;

namespace jemalloc.Tests.Native;

/// <summary>
/// The mallctl policy: calls that crashed the process are refused with an exception naming the
/// key, and the keys that are allowed still work. Crash-prone calls run in a child process, so that
/// a regression fails a test instead of killing the test run.
/// </summary>
[Collection(ProcessWideState.Name)]
public sealed unsafe class MallctlPolicyTests
{
    private static readonly Dictionary<string, string?> NoEnvironment = [];

    [Fact]
    public void Every_former_crash_case_is_refused_in_a_child_process_and_the_arena_survives()
    {
        ChildProcessRunner.Result result = ChildProcessRunner.RunHelper(NoEnvironment, "mallctl-crash-cases");
        Assert.True(result.ExitCode == 0, result.ToString());
        string[] lines = result.Output.Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries);
        string Case(string name) => Assert.Single(lines, line => line.StartsWith($"CASE {name} ", StringComparison.Ordinal));

        foreach ((string name, string key) in new[]
        {
            ("arenas.create.set", "arenas.create"), ("tcache.flush.unknown", "tcache.flush"), ("tcache.destroy.unknown", "tcache.destroy"),
            ("tcache.flush.huge", "tcache.flush"), ("experimental.hooks.remove", "experimental.hooks.remove"),
            ("experimental.hooks.install", "experimental.hooks.install"), ("arena.0.extent_hooks.set", "arena.0.extent_hooks"),
            ("arena.0.extent_hooks.get", "arena.0.extent_hooks"), ("arenas.lookup", "arenas.lookup"), ("thread.allocatedp", "thread.allocatedp"),
            ("arenas.create.command", "arenas.create"), ("tcache.create.command", "tcache.create"),
            ("owned.reset", ".reset"), ("owned.destroy", ".destroy"), ("owned.reset.mib", ".reset"), ("owned.reset.raw", ".reset"),
            ("owned.destroy.rawmib", ".destroy"), ("all.reset", "arena.4096.reset"), ("all.destroy.raw", "arena.4096.destroy"),
            ("destroyed.decay_ms", "arena.4097.dirty_decay_ms"), ("all.decay_ms.raw", "arena.4096.dirty_decay_ms"),
            ("thread.arena.owned", "thread.arena"), ("thread.arena.owned.raw", "thread.arena"),
        })
        {
            string line = Case(name);
            Assert.StartsWith($"CASE {name} MallctlException mallctl '", line, StringComparison.Ordinal);
            Assert.Contains(key, line, StringComparison.Ordinal);
        }

        Assert.Contains("use JemArena.Reset()", Case("owned.reset"), StringComparison.Ordinal);
        Assert.Contains("use JemArena.Dispose()", Case("owned.destroy"), StringComparison.Ordinal);
        Assert.Contains("RESULT arenas.create.raw.nulllength 22", lines);
        Assert.StartsWith("CASE flags.tcache5 ArgumentException The flags (0x700) name thread cache 5", Case("flags.tcache5"), StringComparison.Ordinal);
        Assert.StartsWith("CASE flags.arena4000 ArgumentException The flags (0xFA100000) name arena 4000", Case("flags.arena4000"), StringComparison.Ordinal);

        // The Jem functions: a segmentation fault (never-created id), jemalloc's own abort (the id after the
        // last one created), and an arena created silently, before they checked their flags.
        Assert.StartsWith("CASE jem.mallocx.tcache5 ArgumentException The flags (0x700) name thread cache 5", Case("jem.mallocx.tcache5"), StringComparison.Ordinal);
        Assert.StartsWith("CASE jem.mallocx.tcache.next ArgumentException The flags (0x", Case("jem.mallocx.tcache.next"), StringComparison.Ordinal);
        Assert.StartsWith("CASE jem.dallocx.tcache7 ArgumentException The flags (0x900) name thread cache 7", Case("jem.dallocx.tcache7"), StringComparison.Ordinal);
        Assert.StartsWith("CASE jem.mallocx.arena4000 ArgumentException The flags (0xFA100000) name arena 4000", Case("jem.mallocx.arena4000"), StringComparison.Ordinal);
        Assert.Contains("ARENA_STILL_USABLE 7", lines);
        Assert.Equal("DONE", lines[^1]);
    }

    [Fact]
    public void Past_the_arena_limit_a_JemArena_fails_cleanly_and_a_disposed_index_is_reused()
    {
        ChildProcessRunner.Result result = ChildProcessRunner.RunHelper(NoEnvironment, "arena-limit");
        Assert.True(result.ExitCode == 0, result.ToString());
        string[] lines = result.Output.Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries);
        string limit = Assert.Single(lines, line => line.StartsWith("LIMIT ", StringComparison.Ordinal));
        string[] parts = limit.Split(' ');
        // Every index below 4095 became an arena; the failure is the library's, before jemalloc's table overflows.
        Assert.Equal("4095", parts[2]);
        Assert.Equal("MallctlException", parts[3]);
        Assert.Contains("arenas.create", limit, StringComparison.Ordinal);
        // The failed attempts created nothing: the arena count did not move.
        Assert.Contains("SECOND MallctlException 4095", lines);
        Assert.Contains("KEY MallctlException", lines);
        Assert.Contains("REUSED True 42", lines);
        Assert.Equal("DONE", lines[^1]);
    }

    [Fact]
    public void Allowed_reads_writes_and_commands_still_work()
    {
        Assert.StartsWith("5.3.0", MallctlKeys.Version.Get(), StringComparison.Ordinal);
        Assert.True(Jem.GetMallctl<uint>("arenas.narenas") > 0);
        Assert.True(Jem.GetMallctl<ulong>("arenas.page") >= 4096); // size_t read as ulong on 64-bit
        ulong epoch = Jem.ExchangeMallctl<ulong>("epoch", 1);
        Assert.True(Jem.GetMallctl<ulong>("epoch") >= epoch);
        Jem.MallctlCommand("thread.tcache.flush");
        MallctlKeys.Thread.TcacheFlush.Run();
        MallctlKeys.Arena(0).Purge.Run();
        MallctlKeys.Arena(MallctlKeys.AllArenas).Decay.Run();
        Jem.MallctlNameToMib<uint>("arena.0.purge").Run();
        Assert.True(MallctlKeys.Arena(0).Initialized.Get());

        using var arena = new JemArena();
        arena.DirtyDecayMilliseconds = 1234;
        Assert.Equal(1234, Jem.GetMallctl<nint>($"arena.{arena.Index}.dirty_decay_ms"));
        Jem.SetMallctl($"arena.{arena.Index}.dirty_decay_ms", (nint)4321);
        Assert.Equal(4321, arena.DirtyDecayMilliseconds);
        MallctlKeys.Arena(arena.Index).Purge.Run();
        arena.Reset();
    }

    [Fact]
    public void A_type_mismatch_names_the_expected_type_before_jemalloc_is_asked()
    {
        var wrongKind = Assert.Throws<MallctlException>(() => Jem.GetMallctl<bool>("arenas.narenas"));
        Assert.Contains("arenas.narenas", wrongKind.Message, StringComparison.Ordinal);
        Assert.Contains("unsigned", wrongKind.Message, StringComparison.Ordinal);
        Assert.Contains("access it as uint", wrongKind.Message, StringComparison.Ordinal);

        // Same size, different kind: jemalloc could not tell, the catalog does.
        var sameSize = Assert.Throws<MallctlException>(() => Jem.GetMallctl<nuint>("version"));
        Assert.Contains("const char*", sameSize.Message, StringComparison.Ordinal);

        var command = Assert.Throws<MallctlException>(() => Jem.GetMallctl<uint>("arena.0.purge"));
        Assert.Contains("is a command", command.Message, StringComparison.Ordinal);
        var notCommand = Assert.Throws<MallctlException>(() => Jem.MallctlCommand("arenas.narenas"));
        Assert.Contains("not a command", notCommand.Message, StringComparison.Ordinal);
        Assert.Throws<MallctlException>(() => Jem.ExchangeMallctl<uint>("tcache.create", 0));
    }

    [Fact]
    public void A_thread_cache_created_through_the_library_can_be_flagged_flushed_and_destroyed_once()
    {
        uint cache = MallctlKeys.Tcache.Create.Get();

        // Allowed in flags (structures strip it), flushed, destroyed.
        var buffer = new FixedBuffer<int>(8, new AllocationOptions(MallocxFlags.ThreadCache(cache)));
        buffer[1] = 5;
        Assert.Equal(5, buffer[1]);
        buffer.Free();
        MallctlKeys.Tcache.Flush.Set(cache);
        MallctlKeys.Tcache.Destroy.Set(cache);

        // Destroyed: neither jemalloc nor the flags may see it again.
        var flush = Assert.Throws<MallctlException>(() => MallctlKeys.Tcache.Flush.Set(cache));
        Assert.Contains("tcache.flush", flush.Message, StringComparison.Ordinal);
        Assert.Contains($"Thread cache {cache}", flush.Message, StringComparison.Ordinal);
        Assert.Throws<MallctlException>(() => Jem.SetMallctl("tcache.destroy", cache));
        var flags = Assert.Throws<ArgumentException>(() => new FixedBuffer<int>(8, new AllocationOptions(MallocxFlags.ThreadCache(cache))));
        Assert.Contains($"thread cache {cache}", flags.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_JemArena_thread_cache_cannot_be_destroyed_through_mallctl()
    {
        using var arena = new JemArena();
        nint memory;
        unsafe
        {
            memory = (nint)arena.Allocate(64); // creates this thread's explicit cache for the arena
        }

        bool refusedOne = false;
        for (uint id = 0; id < 64; id++)
        {
            var refused = Record.Exception(() => Jem.SetMallctl("tcache.destroy", id));
            if (refused is MallctlException exception && exception.Message.Contains("belongs to a JemArena", StringComparison.Ordinal))
            {
                refusedOne = true;
            }
        }

        Assert.True(refusedOne, "The arena's own thread cache was not protected.");
        unsafe
        {
            arena.Free((void*)memory);
        }

        arena.Reset();
    }

    [Fact]
    public void A_user_arena_cannot_be_reset_under_live_structures_and_its_index_is_refused_once_destroyed()
    {
        uint index = MallctlKeys.Arenas.Create.Get();
        var options = new AllocationOptions(MallocxFlags.Arena(index) | MallocxFlags.NoThreadCache);
        var array = new SafeArray<long>(16, options);
        array[2] = 9;

        var reset = Assert.Throws<MallctlException>(() => MallctlKeys.Arena(index).Reset.Run());
        Assert.Contains($"arena.{index}.reset", reset.Message, StringComparison.Ordinal);
        Assert.Contains("still live", reset.Message, StringComparison.Ordinal);
        Assert.Throws<MallctlException>(() => Jem.MallctlCommand($"arena.{index}.destroy"));
        Assert.Equal(9, array[2]);

        array.Dispose();
        MallctlKeys.Arena(index).Reset.Run();
        MallctlKeys.Arena(index).Destroy.Run();

        var flags = Assert.Throws<ArgumentException>(() => new FixedBuffer<int>(4, options));
        Assert.Contains($"arena {index}", flags.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Flags_naming_missing_arenas_or_absurd_alignments_throw_and_valid_flags_allocate()
    {
        Assert.Throws<ArgumentException>(() => new FixedBuffer<int>(4, new AllocationOptions(MallocxFlags.Arena(Jem.ArenaCount + 5))));
        var alignment = Assert.Throws<ArgumentException>(() => new FixedBuffer<int>(4, new AllocationOptions(MallocxFlags.LgAlign(63))));
        Assert.Contains("2^63", alignment.Message, StringComparison.Ordinal);

        var aligned = new FixedBuffer<int>(4, new AllocationOptions(MallocxFlags.Align(4096)));
        aligned[0] = 1;
        aligned.Free();
        var automatic = new FixedBuffer<int>(4, new AllocationOptions(MallocxFlags.Arena(0) | MallocxFlags.NoThreadCache));
        automatic[3] = 3;
        Assert.Equal(3, automatic[3]);
        automatic.Free();

        using var arena = new JemArena();
        FixedBuffer<int> inArena = arena.CreateBuffer<int>(4);
        inArena[0] = 4;
        Assert.Equal(4, inArena[0]);
        inArena.Free();
    }

    [Fact]
    public void Thread_arena_writes_onto_a_JemArena_are_refused_everywhere_and_allowed_elsewhere()
    {
        using var arena = new JemArena();
        Workers.RunOne(() =>
        {
            Assert.Throws<MallctlException>(() => MallctlKeys.Thread.Arena.Set(arena.Index));
            Assert.Throws<MallctlException>(() => Jem.ExchangeMallctl("thread.arena", arena.Index));
            Assert.Throws<MallctlException>(() => Jem.MallctlNameToMib<uint>("thread.arena").Set(arena.Index));
            Assert.Throws<InvalidOperationException>(() => JemTuning.ThreadArena = arena.Index);
            MallctlKeys.Thread.Arena.Set(0);
            Assert.Equal(0u, MallctlKeys.Thread.Arena.Get());
        });
    }

    [Fact]
    public void A_mib_index_can_only_replace_numeric_components()
    {
        MallctlMib<uint> purge = Jem.MallctlNameToMib<uint>("arena.0.purge");
        Assert.Throws<ArgumentException>(() => purge.WithIndex(2, 3)); // would turn purge into another key
        Assert.Throws<ArgumentException>(() => purge.WithIndex(0, 1));
        purge.WithIndex(1, 0).Run();
    }

    [Fact]
    public void Default_keys_commands_and_mibs_throw_MallctlException_saying_they_have_no_name()
    {
        foreach (Action call in new Action[]
        {
            () => default(MallctlMib<uint>).Get(),
            () => default(MallctlMib<uint>).Run(),
            () => default(MallctlKey<ulong>).Get(),
            () => default(MallctlKey<string>).Get(),
            () => default(MallctlKey<uint>).Set(1),
            () => default(MallctlCommand).Run(),
        })
        {
            MallctlException e = Assert.Throws<MallctlException>(call);
            Assert.Contains("has no name", e.Message, StringComparison.Ordinal);
        }
    }

    [Theory]
    [InlineData("arena.0x.purge")]
    [InlineData("arena.+0.purge")]
    [InlineData("arena.-0.purge")]
    [InlineData("arena. 0.purge")]
    [InlineData("arena.\t0.purge")]
    [InlineData("stats.arenas.0abc.pactive")]
    public void A_component_jemalloc_would_read_as_a_number_must_be_plain_digits(string name)
    {
        string key = name.Replace("\\t", "\t", StringComparison.Ordinal);
        MallctlException e = Assert.Throws<MallctlException>(() => Jem.MallctlCommand(key));
        Assert.Contains("not a plain decimal number", e.Message, StringComparison.Ordinal);
        Assert.Throws<MallctlException>(() => Jem.GetMallctl<nuint>(key));
        Jem.MallctlCommand("arena.0.purge");
        Jem.MallctlCommand("arena.000.purge"); // leading zeros are still a plain number
    }

    [Fact]
    public void A_name_with_a_NUL_is_refused()
    {
        MallctlException e = Assert.Throws<MallctlException>(() => Jem.MallctlCommand("arena.0.purge\0arena.0.reset"));
        Assert.Contains("NUL", e.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("arena.+0.dirty_decay_ms", "not a plain decimal number")]
    [InlineData("arena.0x.dirty_decay_ms", "not a plain decimal number")]
    [InlineData("arena. 0.dirty_decay_ms", "not a plain decimal number")]
    [InlineData("stats.arenas.+0.nthreads", "not a plain decimal number")]
    [InlineData("arena.0\\0.dirty_decay_ms", "NUL")]
    [InlineData("arena.0.dirty_decay_ms\\0junk", "NUL")]
    public void A_MIB_is_not_looked_up_for_a_name_the_calls_by_name_refuse(string name, string reason)
    {
        string key = name.Replace("\\0", "\0", StringComparison.Ordinal);
        nuint[] mib = new nuint[8];
        Array.Fill(mib, nuint.MaxValue);

        // jemalloc would answer with the MIB of arena 0's key (or of "arena.0"): a MIB standing for another name.
        MallctlException typed = Assert.Throws<MallctlException>(() => Jem.MallctlNameToMib<long>(key));
        Assert.Contains(reason, typed.Message, StringComparison.Ordinal);
        Assert.Contains(reason, Assert.Throws<MallctlException>(() => new MallctlKey<long>(key).ToMib()).Message, StringComparison.Ordinal);
        MallctlException raw = Assert.Throws<MallctlException>(() => Jem.MallctlNameToMib(key, mib, out _));
        Assert.Contains(reason, raw.Message, StringComparison.Ordinal);
        Assert.All(mib, component => Assert.Equal(nuint.MaxValue, component));
        MallctlException byName = Assert.Throws<MallctlException>(() => Jem.Mallctl(key, null, null, null, 0));
        Assert.Contains(reason, byName.Message, StringComparison.Ordinal);

        // The plain name is looked up as before.
        Assert.Equal(0, Jem.MallctlNameToMib("arena.0.dirty_decay_ms", mib, out int plainLength));
        Assert.Equal(3, plainLength);
        Assert.Equal(Jem.GetMallctl<long>("arena.0.dirty_decay_ms"), Jem.MallctlNameToMib<long>("arena.0.dirty_decay_ms").Get());
    }

    [Fact]
    public void The_typed_MIB_lookup_refuses_a_null_or_empty_name()
    {
        Assert.Throws<ArgumentNullException>(() => Jem.MallctlNameToMib<long>(null!));
        Assert.Throws<ArgumentException>(() => Jem.MallctlNameToMib<long>(string.Empty));
    }
}
