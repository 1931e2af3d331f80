using System.Diagnostics.CodeAnalysis;
using System.Runtime.InteropServices;
using BenchmarkDotNet.Attributes;
using jemalloc.Benchmarks.Infrastructure;

namespace jemalloc.Benchmarks.Micro;

/// <summary>
/// Creating and freeing a 64-byte <see cref="FixedBuffer{T}"/> (zeroed, recorded in the ledger)
/// against the raw jemalloc calls. Goal: within 2x of <c>malloc</c> + <c>free</c>.
/// </summary>
[MemoryDiagnoser]
[SuppressMessage("Performance", "CA1822:Mark members as static", Justification = "BenchmarkDotNet runs instance methods.")]
public unsafe class AllocationBenchmarks
{
    private const int Size = 64;

    private static readonly MallocxFlags AlignedFlags = MallocxFlags.Align(16);

    /// <summary>Raw <c>je_malloc</c> + <c>je_free</c>.</summary>
    [Benchmark(Baseline = true, Description = "je_malloc + je_free (64 B)")]
    public void MallocFree()
    {
        void* memory = Jem.Malloc(Size);
        *(byte*)memory = 1;
        Jem.Free(memory);
    }

    /// <summary>
    /// <see cref="Jem.Mallocx(nuint, MallocxFlags)"/> + <see cref="Jem.Dallocx(void*, MallocxFlags)"/> without flags:
    /// the facade's checks (size, flags) on top of the exports, against the <c>je_malloc + je_free</c> baseline.
    /// </summary>
    [Benchmark(Description = "Jem.Mallocx + Jem.Dallocx (64 B)")]
    public void JemMallocxDallocx()
    {
        void* memory = Jem.Mallocx(Size);
        *(byte*)memory = 1;
        Jem.Dallocx(memory);
    }

    /// <summary>
    /// As <see cref="JemMallocxDallocx"/> with an alignment flag (no thread cache, no arena): flags other
    /// than 0 are checked before they reach jemalloc.
    /// </summary>
    [Benchmark(Description = "Jem.Mallocx(Align 16) + Jem.Dallocx (64 B)")]
    public void JemMallocxAlignedDallocx()
    {
        void* memory = Jem.Mallocx(Size, AlignedFlags);
        *(byte*)memory = 1;
        Jem.Dallocx(memory, AlignedFlags);
    }

    /// <summary>Raw zeroing <c>je_mallocx</c> (<c>MALLOCX_ZERO</c>) + sized <c>je_sdallocx</c> (the export, without <see cref="Jem.Sdallocx(void*, nuint, MallocxFlags)"/>'s size check).</summary>
    [Benchmark(Description = "je_mallocx(ZERO) + je_sdallocx (64 B)")]
    public void MallocxZeroSdallocx()
    {
        void* memory = Jem.Mallocx(Size, MallocxFlags.Zero);
        *(byte*)memory = 1;
        JemExports.Sdallocx(memory, Size, MallocxFlags.Zero.Value);
    }

    /// <summary>
    /// The native calls a FixedBuffer of the default options makes: <c>je_malloc</c>, a clear of the
    /// block (the ledger clears; it does not ask jemalloc to), and the sized <c>je_sdallocx</c> export,
    /// which, unlike <see cref="Jem.Sdallocx(void*, nuint, MallocxFlags)"/>, does not check the size first.
    /// </summary>
    [Benchmark(Description = "je_malloc + clear + je_sdallocx (64 B)")]
    public void MallocClearSdallocx()
    {
        void* memory = Jem.Malloc(Size);
        NativeMemory.Clear(memory, Size);
        *(byte*)memory = 1;
        JemExports.Sdallocx(memory, Size, 0);
    }

    /// <summary><c>new FixedBuffer&lt;byte&gt;(64)</c> + <c>Free()</c>.</summary>
    [Benchmark(Description = "new FixedBuffer<byte>(64) + Free()")]
    public void FixedBufferCreateFree()
    {
        var buffer = new FixedBuffer<byte>(Size);
        buffer[0] = 1;
        buffer.Free();
    }

    /// <summary>A managed <c>new byte[64]</c>, for reference (the GC's cost is amortised, not shown here).</summary>
    [Benchmark(Description = "new byte[64] (managed)")]
    public byte[] ManagedArray()
    {
        var array = new byte[Size];
        array[0] = 1;
        return array;
    }

    /// <summary>Checks the raw pair: a block holds at least the size asked for, and the operation gives back all it takes.</summary>
    [GlobalCleanup(Target = nameof(MallocFree))]
    public void CheckMallocFree()
    {
        const string name = "micro allocation: je_malloc + je_free";
        void* memory = Jem.Malloc(Size);
        nuint usable = BrokenResultSwitch.Corrupt(Jem.MallocUsableSize(memory));
        Jem.Free(memory);
        ResultChecks.Check(name, memory != null && usable >= Size, $"the block holds at least {Size} bytes (usable size {usable})");
        MicroChecks.FreesEverything(name, MallocFree);
    }

    /// <summary>Checks the facade's pair: a block has its size class's real size, and the operation gives back all it takes.</summary>
    [GlobalCleanup(Target = nameof(JemMallocxDallocx))]
    public void CheckJemMallocxDallocx()
    {
        const string name = "micro allocation: Jem.Mallocx + Jem.Dallocx";
        void* memory = Jem.Mallocx(Size);
        nuint usable = BrokenResultSwitch.Corrupt(Jem.Sallocx(memory));
        Jem.Dallocx(memory);
        ResultChecks.Check(name, usable == Jem.Nallocx(Size), $"the block has the real size of {Size} bytes' size class, {Jem.Nallocx(Size)} (Sallocx: {usable})");
        MicroChecks.FreesEverything(name, JemMallocxDallocx);
    }

    /// <summary>Checks the aligned pair: a block is aligned to 16 bytes with its size class's real size, and the operation gives back all it takes.</summary>
    [GlobalCleanup(Target = nameof(JemMallocxAlignedDallocx))]
    public void CheckJemMallocxAlignedDallocx()
    {
        const string name = "micro allocation: Jem.Mallocx(Align 16) + Jem.Dallocx";
        void* memory = Jem.Mallocx(Size, AlignedFlags);
        nuint address = BrokenResultSwitch.Corrupt((nuint)memory);
        nuint usable = Jem.Sallocx(memory, AlignedFlags);
        Jem.Dallocx(memory, AlignedFlags);
        ResultChecks.Check(name, address % 16 == 0 && usable == Jem.Nallocx(Size, AlignedFlags),
            $"the block is 16-byte aligned with the real size of its size class, {Jem.Nallocx(Size, AlignedFlags)} (address 0x{address:X}, Sallocx {usable})");
        MicroChecks.FreesEverything(name, JemMallocxAlignedDallocx);
    }

    /// <summary>Checks the zeroing pair: every byte of a block is zero, and the operation gives back all it takes.</summary>
    [GlobalCleanup(Target = nameof(MallocxZeroSdallocx))]
    public void CheckMallocxZeroSdallocx()
    {
        const string name = "micro allocation: je_mallocx(ZERO) + je_sdallocx";
        // Dirty a block of the same size class first, so the zeroed one is likely to reuse it.
        byte* dirty = (byte*)Jem.Malloc(Size);
        new Span<byte>(dirty, Size).Fill(0xA5);
        Jem.Free(dirty);
        byte* memory = (byte*)Jem.Mallocx(Size, MallocxFlags.Zero);
        var bytes = new Span<byte>(memory, Size);
        BrokenResultSwitch.Corrupt(bytes);
        bool zeroed = !bytes.ContainsAnyExcept((byte)0);
        JemExports.Sdallocx(memory, Size, MallocxFlags.Zero.Value);
        ResultChecks.Check(name, zeroed, $"every byte of a {Size}-byte block is zero");
        MicroChecks.FreesEverything(name, MallocxZeroSdallocx);
    }

    /// <summary>Checks the clearing pair: the clear leaves every byte of a reused, dirtied block zero, and the operation gives back all it takes.</summary>
    [GlobalCleanup(Target = nameof(MallocClearSdallocx))]
    public void CheckMallocClearSdallocx()
    {
        const string name = "micro allocation: je_malloc + clear + je_sdallocx";
        byte* dirty = (byte*)Jem.Malloc(Size);
        new Span<byte>(dirty, Size).Fill(0xA5);
        Jem.Free(dirty);
        byte* memory = (byte*)Jem.Malloc(Size);
        NativeMemory.Clear(memory, Size);
        var bytes = new Span<byte>(memory, Size);
        BrokenResultSwitch.Corrupt(bytes);
        bool zeroed = !bytes.ContainsAnyExcept((byte)0);
        JemExports.Sdallocx(memory, Size, 0);
        ResultChecks.Check(name, zeroed, $"every byte of a cleared {Size}-byte block is zero");
        MicroChecks.FreesEverything(name, MallocClearSdallocx);
    }

    /// <summary>Checks the FixedBuffer pair: a new buffer is zeroed and invalid after Free, and the operation gives back all it takes.</summary>
    [GlobalCleanup(Target = nameof(FixedBufferCreateFree))]
    public void CheckFixedBufferCreateFree()
    {
        const string name = "micro allocation: new FixedBuffer<byte>(64) + Free()";
        var buffer = new FixedBuffer<byte>(Size);
        bool zeroed;
        using (MemoryLease<byte> lease = buffer.Lease())
        {
            BrokenResultSwitch.Corrupt(lease.Span);
            zeroed = lease.Span.Length == Size && !lease.Span.ContainsAnyExcept((byte)0);
        }

        buffer.Free();
        ResultChecks.Check(name, zeroed && !buffer.IsValid, $"a new buffer has {Size} zero bytes and is invalid once freed");
        MicroChecks.FreesEverything(name, FixedBufferCreateFree);
    }

    /// <summary>Checks the managed row: the array has the size asked for, the byte written and zeros elsewhere.</summary>
    [GlobalCleanup(Target = nameof(ManagedArray))]
    public void CheckManagedArray()
    {
        byte[] array = ManagedArray();
        BrokenResultSwitch.Corrupt(array.AsSpan());
        ResultChecks.Check("micro allocation: new byte[64]", array.Length == Size && array[0] == 1 && !array.AsSpan(1).ContainsAnyExcept((byte)0),
            $"the array has {Size} bytes, the one written and zeros");
    }
}
