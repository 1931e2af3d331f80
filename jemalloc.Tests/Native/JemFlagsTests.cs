namespace jemalloc.Tests.Native;

/// <summary>
/// The <c>*allocx</c> functions check their flags as the structures do: a thread cache jemalloc never
/// handed out (or one destroyed) crashed the process, and an arena index that names no arena made
/// jemalloc create one silently. Each is an <see cref="ArgumentException"/> naming the flags' value, and
/// nothing is allocated or freed. In the process-wide collection: a destroyed cache's id must not be
/// handed out again by another test's <c>tcache.create</c> meanwhile.
/// </summary>
[Collection(ProcessWideState.Name)]
public sealed unsafe class JemFlagsTests
{
    // Never created by any test: the registry knows only ids tcache.create handed out, which start at 0.
    private const uint NeverCreatedCache = 4000;
    private const uint NoSuchArena = 4000;

    public static TheoryData<string> BadFlags => new() { "thread cache", "destroyed thread cache", "arena" };

    [Theory]
    [MemberData(nameof(BadFlags))]
    public void Every_allocx_function_refuses_the_flags_before_jemalloc_sees_them(string what)
    {
        MallocxFlags flags = Flags(what);
        string value = flags.ToString();
        byte* memory = (byte*)Jem.Mallocx(100);
        memory[0] = 42;
        try
        {
            AssertRefused(() => Jem.Mallocx(16, flags), value);
            AssertRefused(() => Jem.Mallocx(16, flags.Value), value);
            AssertRefused(() => Jem.Rallocx(memory, 5000, flags), value);
            AssertRefused(() => Jem.Rallocx(memory, 5000, flags.Value), value);
            AssertRefused(() => Jem.Xallocx(memory, 200, 0, flags), value);
            AssertRefused(() => Jem.Xallocx(memory, 200, 0, flags.Value), value);
            AssertRefused(() => Jem.Sallocx(memory, flags), value);
            AssertRefused(() => Jem.Sallocx(memory, flags.Value), value);
            AssertRefused(() => Jem.Nallocx(16, flags), value);
            AssertRefused(() => Jem.Nallocx(16, flags.Value), value);
            AssertRefused(() => Jem.Dallocx(memory, flags), value);
            AssertRefused(() => Jem.Dallocx(memory, flags.Value), value);
            AssertRefused(() => Jem.Sdallocx(memory, 100, flags), value);
            AssertRefused(() => Jem.Sdallocx(memory, 100, flags.Value), value);

            // Nothing was moved, resized or freed.
            Assert.Equal(42, memory[0]);
            Assert.Equal(Jem.Nallocx(100), Jem.Sallocx(memory));
        }
        finally
        {
            Jem.Dallocx(memory);
        }
    }

    [Fact]
    public void A_thread_cache_never_created_is_named_in_the_message()
    {
        var exception = Assert.Throws<ArgumentException>(() => Jem.Mallocx(16, MallocxFlags.ThreadCache(NeverCreatedCache)));
        Assert.Contains($"thread cache {NeverCreatedCache}", exception.Message, StringComparison.Ordinal);
        Assert.Contains("tcache.create", exception.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void An_arena_that_does_not_exist_is_refused_and_not_created()
    {
        var exception = Assert.Throws<ArgumentException>(() => Jem.Mallocx(16, MallocxFlags.Arena(NoSuchArena)));
        Assert.Contains($"arena {NoSuchArena}", exception.Message, StringComparison.Ordinal);
        Assert.Contains("arenas.narenas", exception.Message, StringComparison.Ordinal);

        // jemalloc would have created arena 4000 (and every index below it would count in arenas.narenas).
        Assert.True(Jem.ArenaCount <= NoSuchArena, $"arenas.narenas is {Jem.ArenaCount}");
        Assert.Throws<MallctlException>(() => Jem.GetMallctl<nint>($"arena.{NoSuchArena}.dirty_decay_ms"));
    }

    [Fact]
    public void A_thread_cache_the_library_created_serves_every_allocx_function_until_it_is_destroyed()
    {
        uint cache = MallctlKeys.Tcache.Create.Get();
        MallocxFlags flags = MallocxFlags.ThreadCache(cache);
        try
        {
            byte* memory = (byte*)Jem.Mallocx(100, flags);
            memory[0] = 7;
            Assert.Equal(Jem.Nallocx(100, flags), Jem.Sallocx(memory, flags));
            memory = (byte*)Jem.Rallocx(memory, 300, flags);
            Assert.Equal(7, memory[0]);
            Assert.True(Jem.Xallocx(memory, 300, 0, flags) >= 300);
            Jem.Sdallocx(memory, 300, flags);
            Jem.Dallocx(Jem.Mallocx(16, flags), flags);
        }
        finally
        {
            MallctlKeys.Tcache.Destroy.Set(cache);
        }

        var exception = Assert.Throws<ArgumentException>(() => Jem.Mallocx(16, flags));
        Assert.Contains($"thread cache {cache}", exception.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_JemArena_flags_and_an_automatic_arena_pass_the_check()
    {
        using var arena = new JemArena();
        long before = arena.GetStatistics().SmallAllocatedBytes;
        void* inArena = Jem.Mallocx(64, arena.Flags);
        Assert.Equal(before + 64, arena.GetStatistics().SmallAllocatedBytes);
        Jem.Dallocx(inArena, arena.Flags);

        // An automatic arena not used yet still exists for jemalloc (opt.narenas of them).
        uint lastAutomatic = MallctlKeys.Opt.Narenas.Get() - 1;
        void* automatic = Jem.Mallocx(64, MallocxFlags.Arena(lastAutomatic) | MallocxFlags.NoThreadCache);
        Assert.Equal(Jem.Nallocx(64), Jem.Sallocx(automatic, MallocxFlags.Arena(lastAutomatic)));
        Jem.Dallocx(automatic, MallocxFlags.NoThreadCache);
    }

    [Fact]
    public void An_alignment_larger_than_any_block_is_refused_by_every_allocx_function()
    {
        MallocxFlags flags = MallocxFlags.LgAlign(63);
        AssertRefused(() => Jem.Mallocx(16, flags), flags.ToString());
        AssertRefused(() => Jem.Nallocx(16, flags), flags.ToString());
    }

    private static MallocxFlags Flags(string what)
    {
        switch (what)
        {
            case "thread cache":
                return MallocxFlags.ThreadCache(NeverCreatedCache);
            case "destroyed thread cache":
                uint cache = MallctlKeys.Tcache.Create.Get();
                MallctlKeys.Tcache.Destroy.Set(cache);
                return MallocxFlags.ThreadCache(cache);
            default:
                return MallocxFlags.Arena(NoSuchArena);
        }
    }

    private static void AssertRefused(Action call, string flagsValue)
    {
        var exception = Assert.Throws<ArgumentException>(call);
        Assert.Equal("flags", exception.ParamName);
        Assert.Contains($"({flagsValue})", exception.Message, StringComparison.Ordinal);
    }
}
