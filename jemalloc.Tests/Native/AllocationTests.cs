using System.Runtime.InteropServices;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.Native;

public unsafe class AllocationTests
{
    // Larger than jemalloc's largest size class (and than any address space), so jemalloc fails at once.
    private static readonly nuint AbsurdSize = nuint.MaxValue - 4096;

    [Fact]
    public void Malloc_gives_writable_memory_of_at_least_the_size()
    {
        byte* memory = (byte*)Jem.Malloc(100);
        try
        {
            new Span<byte>(memory, 100).Fill(0xAB);
            Assert.Equal(0xAB, memory[99]);
            Assert.True(Jem.MallocUsableSize(memory) >= 100);
        }
        finally
        {
            Jem.Free(memory);
        }
    }

    [Fact]
    public void Malloc_of_zero_bytes_gives_a_unique_pointer()
    {
        void* first = Jem.Malloc(0);
        void* second = Jem.Malloc(0);
        Assert.True(first != null && second != null && first != second);
        Jem.Free(first);
        Jem.Free(second);
    }

    [Fact]
    public void Free_of_null_does_nothing()
    {
        Jem.Free(null);
        Assert.Equal((nuint)0, Jem.MallocUsableSize(null));
    }

    [Fact]
    public void Calloc_gives_zeroed_memory()
    {
        // Dirty a block of the same size class first so a zeroed result is not luck.
        byte* dirty = (byte*)Jem.Malloc(4000);
        new Span<byte>(dirty, 4000).Fill(0xFF);
        Jem.Free(dirty);

        byte* memory = (byte*)Jem.Calloc(1000, 4);
        try
        {
            Assert.True(new ReadOnlySpan<byte>(memory, 4000).IndexOfAnyExcept((byte)0) < 0);
        }
        finally
        {
            Jem.Free(memory);
        }
    }

    [Fact]
    public void Calloc_whose_size_overflows_throws_OutOfMemoryException()
    {
        Assert.Throws<OutOfMemoryException>(() => Jem.Calloc(nuint.MaxValue / 2, 4));
    }

    [Fact]
    public void Realloc_keeps_the_contents_when_growing_and_shrinking()
    {
        byte* memory = (byte*)Jem.Malloc(64);
        for (int i = 0; i < 64; i++)
        {
            memory[i] = (byte)i;
        }

        memory = (byte*)Jem.Realloc(memory, 1 << 20);
        Assert.True(Jem.MallocUsableSize(memory) >= 1 << 20);
        memory = (byte*)Jem.Realloc(memory, 32);
        for (int i = 0; i < 32; i++)
        {
            Assert.Equal((byte)i, memory[i]);
        }

        Jem.Free(memory);
    }

    [Fact]
    public void Realloc_of_null_allocates_and_of_zero_bytes_keeps_a_valid_allocation()
    {
        void* memory = Jem.Realloc(null, 48);
        Assert.True(Jem.MallocUsableSize(memory) >= 48);
        memory = Jem.Realloc(memory, 0);
        Assert.True(memory != null);
        Assert.True(Jem.MallocUsableSize(memory) >= 1);
        Jem.Free(memory);
    }

    [Fact]
    public void Realloc_that_fails_throws_and_leaves_the_memory_intact()
    {
        byte* memory = (byte*)Jem.Malloc(16);
        memory[0] = 42;
        Assert.Throws<OutOfMemoryException>(() => Jem.Realloc(memory, AbsurdSize));
        Assert.Equal(42, memory[0]);
        Jem.Free(memory);
    }

    [Theory]
    [InlineData(8)]
    [InlineData(64)]
    [InlineData(4096)]
    [InlineData(1 << 21)]
    public void AlignedAlloc_and_PosixMemalign_align_as_asked(int alignment)
    {
        void* aligned = Jem.AlignedAlloc((nuint)alignment, 100);
        void* posix = Jem.PosixMemalign((nuint)alignment, 100);
        Assert.Equal(0, (long)aligned % alignment);
        Assert.Equal(0, (long)posix % alignment);
        Jem.Free(aligned);
        Jem.Free(posix);
    }

    [Theory]
    [InlineData(0)]
    [InlineData(3)]
    [InlineData(48)]
    public void AlignedAlloc_rejects_an_alignment_that_is_not_a_power_of_two(int alignment)
    {
        var exception = Assert.Throws<ArgumentException>(() => Jem.AlignedAlloc((nuint)alignment, 16));
        Assert.Equal("alignment", exception.ParamName);
    }

    [Theory]
    [InlineData(4)]
    [InlineData(24)]
    public void PosixMemalign_rejects_alignments_below_a_pointer_or_not_powers_of_two(int alignment)
    {
        var exception = Assert.Throws<ArgumentException>(() => Jem.PosixMemalign((nuint)alignment, 16));
        Assert.Equal("alignment", exception.ParamName);
    }

    [Fact]
    public void Mallocx_applies_zero_and_alignment_flags()
    {
        byte* dirty = (byte*)Jem.Mallocx(3000);
        new Span<byte>(dirty, 3000).Fill(0xEE);
        Jem.Dallocx(dirty);

        byte* memory = (byte*)Jem.Mallocx(3000, MallocxFlags.Zero | MallocxFlags.Align(256));
        try
        {
            Assert.Equal(0, (long)memory % 256);
            Assert.True(new ReadOnlySpan<byte>(memory, 3000).IndexOfAnyExcept((byte)0) < 0);
        }
        finally
        {
            Jem.Dallocx(memory, MallocxFlags.Align(256));
        }
    }

    [Fact]
    public void Mallocx_with_raw_flag_bits_works_like_the_typed_flags()
    {
        void* memory = Jem.Mallocx(100, (MallocxFlags.Align(128) | MallocxFlags.Zero).Value);
        Assert.Equal(0, (long)memory % 128);
        Assert.Equal(Jem.Nallocx(100, MallocxFlags.Align(128)), Jem.Sallocx(memory, 0));
        Jem.Sdallocx(memory, 100, MallocxFlags.Align(128).Value);
    }

    [Fact]
    public void Allocx_functions_reject_size_zero()
    {
        void* memory = Jem.Mallocx(16);
        try
        {
            Assert.Equal("size", Assert.Throws<ArgumentOutOfRangeException>(() => Jem.Mallocx(0)).ParamName);
            Assert.Equal("size", Assert.Throws<ArgumentOutOfRangeException>(() => Jem.Rallocx(memory, 0)).ParamName);
            Assert.Equal("size", Assert.Throws<ArgumentOutOfRangeException>(() => Jem.Xallocx(memory, 0, 0)).ParamName);
            Assert.Equal("size", Assert.Throws<ArgumentOutOfRangeException>(() => Jem.Nallocx(0)).ParamName);
            // Sdallocx as the others: size 0 is out of range, not a wrong size, and frees nothing.
            var sized = Assert.Throws<ArgumentOutOfRangeException>(() => Jem.Sdallocx(memory, 0));
            Assert.Equal("size", sized.ParamName);
            Assert.Equal("size", Assert.Throws<ArgumentOutOfRangeException>(() => Jem.Sdallocx(memory, 0, MallocxFlags.None.Value)).ParamName);
            Assert.Equal(Jem.Nallocx(16), Jem.Sallocx(memory));
        }
        finally
        {
            Jem.Dallocx(memory);
        }
    }

    [Fact]
    public void Pointer_functions_reject_null()
    {
        Assert.Throws<ArgumentNullException>(() => Jem.Rallocx(null, 16));
        Assert.Throws<ArgumentNullException>(() => Jem.Xallocx(null, 16, 0));
        Assert.Throws<ArgumentNullException>(() => Jem.Sallocx(null));
        Assert.Throws<ArgumentNullException>(() => Jem.Dallocx(null));
        Assert.Throws<ArgumentNullException>(() => Jem.Sdallocx(null, 16));
    }

    [Fact]
    public void Rallocx_moves_or_resizes_keeping_the_contents()
    {
        long* memory = (long*)Jem.Mallocx(8 * 16);
        for (int i = 0; i < 16; i++)
        {
            memory[i] = i * 7L;
        }

        memory = (long*)Jem.Rallocx(memory, 8 * 100_000, MallocxFlags.Zero);
        Assert.True(Jem.Sallocx(memory) >= 8 * 100_000);
        Assert.Equal(15 * 7L, memory[15]);
        Assert.Equal(0L, memory[99_999]);
        memory = (long*)Jem.Rallocx(memory, 8 * 4, 0);
        Assert.Equal(3 * 7L, memory[3]);
        Jem.Dallocx(memory, 0);
    }

    [Fact]
    public void Xallocx_never_moves_and_reports_the_real_size()
    {
        byte* memory = (byte*)Jem.Mallocx(1 << 20);
        nuint before = Jem.Sallocx(memory);

        nuint shrunk = Jem.Xallocx(memory, 1 << 19, 0);
        Assert.True(shrunk >= 1 << 19 && shrunk <= before);
        Assert.Equal(shrunk, Jem.Sallocx(memory));

        // Growing in place may or may not succeed; either way the answer is the allocation's real size.
        nuint grown = Jem.Xallocx(memory, 1 << 21, 1 << 20, MallocxFlags.None);
        Assert.Equal(grown, Jem.Sallocx(memory));
        Assert.Equal(grown, Jem.Xallocx(memory, grown, 0, 0));
        Jem.Dallocx(memory);
    }

    [Fact]
    public void Xallocx_reports_the_real_size_when_only_the_size_without_the_extra_fits_in_place()
    {
        // jemalloc 5.3.0 grows the block to the size without the extra when the size with it does not
        // fit, yet reports failure and the old size (src/large.c, large_ralloc_no_move). The layout that
        // makes it so: 512 KiB, then 1.5 MiB free, then a live block.
        using var arena = new JemArena();
        MallocxFlags flags = MallocxFlags.Arena(arena.Index) | MallocxFlags.NoThreadCache;
        byte* block = (byte*)Jem.Mallocx(4 << 20, flags);
        Assert.Equal((nuint)(512 << 10), Jem.Xallocx(block, 512 << 10, 0, flags));
        byte* gap = (byte*)Jem.Mallocx(1536 << 10, flags);
        byte* wall = (byte*)Jem.Mallocx(1 << 20, flags);
        Jem.Dallocx(gap, flags);

        nuint reported = Jem.Xallocx(block, 2 << 20, 1 << 20, flags);

        Assert.Equal(Jem.Sallocx(block, flags), reported);
        if (OperatingSystem.IsLinux() && RuntimeInformation.ProcessArchitecture == Architecture.X64)
        {
            // Where the layout was checked: the block did grow, to the size without the extra.
            Assert.Equal((nuint)(2 << 20), reported);
        }

        Jem.Sdallocx(block, reported, flags);
        Jem.Dallocx(wall, flags);
    }

    [Theory]
    [InlineData(1)]
    [InlineData(17)]
    [InlineData(4000)]
    [InlineData(5_000_000)]
    public void Nallocx_predicts_the_real_size_Sallocx_reports(int size)
    {
        void* memory = Jem.Mallocx((nuint)size);
        nuint predicted = Jem.Nallocx((nuint)size);
        Assert.True(predicted >= (nuint)size);
        Assert.Equal(predicted, Jem.Sallocx(memory));
        Assert.Equal(predicted, Jem.Sallocx(memory, 0));
        Assert.Equal(predicted, Jem.MallocUsableSize(memory));
        Assert.Equal(predicted, Jem.Nallocx((nuint)size, 0));
        Jem.Sdallocx(memory, (nuint)size);
    }

    [Fact]
    public void Nallocx_of_an_impossible_size_is_zero()
    {
        Assert.Equal((nuint)0, Jem.Nallocx(AbsurdSize));
    }

    [Fact]
    public void Sdallocx_with_a_wrong_size_throws_and_frees_nothing()
    {
        // In an arena of its own without the thread cache, so the arena's statistics show what is freed.
        uint arena = OwnArena.Value;
        var flags = MallocxFlags.Arena(arena) | MallocxFlags.NoThreadCache;
        nuint before = SmallAllocated(arena);
        byte* memory = (byte*)Jem.Mallocx(100, flags);
        memory[0] = 9;
        Assert.Equal(before + Jem.Nallocx(100), SmallAllocated(arena));

        var exception = Assert.Throws<ArgumentException>(() => Jem.Sdallocx(memory, 5000, flags));
        Assert.Equal("size", exception.ParamName);
        Assert.Contains("nothing was freed", exception.Message, StringComparison.Ordinal);
        Assert.Equal(9, memory[0]);
        Assert.Equal(Jem.Nallocx(100), Jem.Sallocx(memory));
        Assert.Equal(before + Jem.Nallocx(100), SmallAllocated(arena));

        // Any size up to the real size is accepted, and then the memory is freed.
        Jem.Sdallocx(memory, Jem.Sallocx(memory), flags);
        Assert.Equal(before, SmallAllocated(arena));
    }

    [Fact]
    public void Dallocx_can_bypass_the_thread_cache()
    {
        // Bound to an arena of its own on a new thread, so the arena's statistics show only this test.
        Workers.RunOne(() =>
        {
            uint arena = OwnArena.Value;
            MallctlKeys.Thread.Arena.Set(arena);
            nuint before = SmallAllocated(arena);
            nuint size = Jem.Nallocx(64);

            // Through the thread cache: the block stays allocated to the cache until it is flushed.
            void* cached = Jem.Mallocx(64);
            Jem.Dallocx(cached);
            Assert.True(ThreadCacheBytes(arena) >= (long)size, "Without the flag the freed block waits in the thread cache.");
            MallctlKeys.Thread.TcacheFlush.Run();
            Assert.Equal(0, ThreadCacheBytes(arena));
            Assert.Equal(before, SmallAllocated(arena));

            // Bypassing it: the arena gets the block back at once, nothing waits in the cache.
            void* memory = Jem.Mallocx(64, MallocxFlags.NoThreadCache);
            Assert.Equal(before + size, SmallAllocated(arena));
            Jem.Dallocx(memory, MallocxFlags.NoThreadCache);
            Assert.Equal(before, SmallAllocated(arena));
            Assert.Equal(0, ThreadCacheBytes(arena));

            void* again = Jem.Mallocx(64, MallocxFlags.NoThreadCache.Value);
            Assert.True(again != null);
            Assert.Equal(before + size, SmallAllocated(arena));
            Jem.Dallocx(again, MallocxFlags.NoThreadCache.Value);
            Assert.Equal(before, SmallAllocated(arena));
        });
    }

    // An arena of its own: only these tests allocate in it.
    private static readonly Lazy<uint> OwnArena = new(() => MallctlKeys.Arenas.Create.Get());

    private static nuint SmallAllocated(uint arena)
    {
        MallctlKeys.Epoch.Set(1);
        return MallctlKeys.Arena(arena).SmallAllocated.Get();
    }

    private static long ThreadCacheBytes(uint arena)
    {
        MallctlKeys.Epoch.Set(1);
        return (long)Jem.GetMallctl<nuint>($"stats.arenas.{arena}.tcache_bytes");
    }

    [Fact]
    public void An_absurd_size_throws_OutOfMemoryException_from_every_allocation_function_and_the_process_goes_on()
    {
        void* small = Jem.Mallocx(16);
        Assert.Throws<OutOfMemoryException>(() => Jem.Malloc(AbsurdSize));
        Assert.Throws<OutOfMemoryException>(() => Jem.Malloc(unchecked((nuint)long.MaxValue)));
        Assert.Throws<OutOfMemoryException>(() => Jem.Calloc(1, AbsurdSize));
        Assert.Throws<OutOfMemoryException>(() => Jem.Mallocx(AbsurdSize));
        Assert.Throws<OutOfMemoryException>(() => Jem.Mallocx(AbsurdSize, MallocxFlags.Zero));
        Assert.Throws<OutOfMemoryException>(() => Jem.Rallocx(small, AbsurdSize));
        Assert.Throws<OutOfMemoryException>(() => Jem.AlignedAlloc(64, AbsurdSize));
        Assert.Throws<OutOfMemoryException>(() => Jem.PosixMemalign(64, AbsurdSize));
        var message = Assert.Throws<OutOfMemoryException>(() => Jem.Malloc(AbsurdSize)).Message;
        Assert.Contains(AbsurdSize.ToString("N0", System.Globalization.CultureInfo.CurrentCulture), message, StringComparison.Ordinal);

        // Still fully usable afterwards.
        byte* after = (byte*)Jem.Malloc(1 << 16);
        after[(1 << 16) - 1] = 1;
        Jem.Free(after);
        Assert.Equal(Jem.Nallocx(16), Jem.Sallocx(small));
        Jem.Dallocx(small);
    }

    [Fact]
    public void MallocxFlags_describe_their_bits()
    {
        Assert.Equal(0x40, MallocxFlags.Zero.Value);
        Assert.Equal(0x100, MallocxFlags.NoThreadCache.Value);
        Assert.Equal(6, MallocxFlags.Align(64).Value);
        Assert.Equal(MallocxFlags.Align(64), MallocxFlags.LgAlign(6));
        Assert.Equal((3 + 1) << 20, MallocxFlags.Arena(3).Value);
        Assert.Equal(3u, MallocxFlags.Arena(3).ArenaIndex);
        Assert.Null(MallocxFlags.Zero.ArenaIndex);
        Assert.Equal((5 + 2) << 8, MallocxFlags.ThreadCache(5).Value);
        Assert.Equal(MallocxFlags.Zero | MallocxFlags.Align(8), MallocxFlags.FromValue(0x43));
        Assert.Throws<ArgumentException>(() => MallocxFlags.Align(12));
        Assert.Throws<ArgumentOutOfRangeException>(() => MallocxFlags.LgAlign(64));
        Assert.Throws<ArgumentOutOfRangeException>(() => MallocxFlags.Arena(4095));
    }
}
