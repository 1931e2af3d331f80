using System.Diagnostics.CodeAnalysis;
using System.Runtime.InteropServices;
using BenchmarkDotNet.Attributes;
using jemalloc.Benchmarks.Infrastructure;

namespace jemalloc.Benchmarks.Suites.Structures;

/// <summary>
/// Fill and create-and-fill of a native structure of <typeparamref name="T"/> against the best
/// managed code, plus the machine's limit (<c>memset</c> of memory that is already paged in). The
/// derived class supplies the native structure's benchmarks. As in the 2018 jembench, <c>--fill</c>
/// runs both fill and create-and-fill (the create-and-fill benchmarks are in both categories, and
/// form their own group with their own baseline); <c>--create</c> runs create-and-fill only.
/// </summary>
/// <typeparam name="T">The element type.</typeparam>
/// <remarks>
/// Each benchmark's setup allocates only the memory that benchmark uses, and its cleanup checks the
/// result, frees the memory and collects, so a managed and a native structure of the run's size are
/// never alive together. The check is of what the last timed operation left: a create benchmark
/// keeps what it created until its next operation, which frees it first (the same work per
/// operation), so the cleanup checks every element of the structure the last timed run made.
/// </remarks>
[ElementRows]
public abstract unsafe class StructureBenchmarks<T> where T : unmanaged, IEquatable<T>
{
    private T[]? _managed;

    /// <summary>The sizes given on the command line.</summary>
    [SuppressMessage("Design", "CA1000:Do not declare static members on generic types", Justification = "BenchmarkDotNet reads [ParamsSource] from the benchmark class itself.")]
    public static IEnumerable<long> Sizes => SuiteParameters.Sizes;

    /// <summary>The number of elements.</summary>
    [ParamsSource(nameof(Sizes))]
    public long Parameter { get; set; }

    /// <summary>The value every benchmark writes.</summary>
    protected static T Value => FillValue.Of<T>();

    /// <summary>The managed array's length: the parameter, or the largest array .NET allows if that is smaller.</summary>
    protected virtual int ManagedLength => checked((int)Parameter);

    /// <summary>The structure's name in messages.</summary>
    protected abstract string StructureName { get; }

    // ---------------------------------------------------------------- fill

    /// <summary>Allocates the managed array and pages it in.</summary>
    [GlobalSetup(Target = nameof(FillManaged))]
    public void SetupManagedFill()
    {
        _managed = new T[ManagedLength];
        _managed.AsSpan().Clear();
    }

    /// <summary>Fills the managed array with <see cref="Span{T}.Fill"/>.</summary>
    [Benchmark(Baseline = true, Description = "Managed array: Span<T>.Fill")]
    [BenchmarkCategory(Categories.Fill)]
    [ManagedArrayRow]
    public void FillManaged() => _managed.AsSpan().Fill(Value);

    /// <summary>Checks every element of the managed array and drops it.</summary>
    [GlobalCleanup(Target = nameof(FillManaged))]
    public void CleanupManagedFill()
    {
        BrokenResultSwitch.Corrupt(_managed.AsSpan());
        ResultChecks.Check($"{StructureName} fill: managed array [{ManagedLength}]", !_managed.AsSpan().ContainsAnyExcept(Value), "every element of the managed array holds the fill value");
        _managed = null;
        Collect();
    }

    /// <summary>Fills the native structure with its own method.</summary>
    public abstract void FillNative();

    /// <summary>
    /// A limit of the machine: the C library's <c>memset</c> (through P/Invoke) over the native
    /// structure's paged-in bytes. Every fill value of jembench is one byte repeated
    /// (<see cref="FillValue.Pattern"/>), so memset writes exactly what the other rows write.
    /// </summary>
    [Benchmark(Description = "Machine limit: libc memset")]
    [BenchmarkCategory(Categories.Fill)]
    public void FillMachineLimit() => MachineLimits.LibcMemset(NativePointer, FillValue.Pattern, NativeBytes);

    /// <summary>
    /// A limit of the machine: a plain non-temporal store loop of the benchmark project's own
    /// (<see cref="MachineLimits.NonTemporalFill"/>) writing the fill value over the same bytes.
    /// </summary>
    [Benchmark(Description = "Machine limit: non-temporal store loop")]
    [BenchmarkCategory(Categories.Fill)]
    public void FillNonTemporalLimit() => MachineLimits.NonTemporalFill((T*)NativePointer, Parameter, Value);

    /// <summary>
    /// The library's fill policy on the same bytes: <see cref="FillPolicy.Fill{T}(Span{T}, T)"/>, which
    /// writes with the kernel the policy chose (jembench prints the choice and its figures under the
    /// table), next to the two limits and without the structure's own overhead.
    /// </summary>
    [Benchmark(Description = "Fill policy's choice: FillPolicy.Fill")]
    [BenchmarkCategory(Categories.Fill)]
    public void FillPolicyChoice()
    {
        T* pointer = (T*)NativePointer;
        for (long done = 0; done < Parameter; done += int.MaxValue)
        {
            FillPolicy.Fill(new Span<T>(pointer + done, (int)Math.Min(Parameter - done, int.MaxValue)), Value);
        }
    }

    /// <summary>Allocates the native structure and pages it in.</summary>
    [GlobalSetup(Targets = [nameof(FillNative), nameof(FillMachineLimit), nameof(FillNonTemporalLimit), nameof(FillPolicyChoice)])]
    public void SetupNativeFill()
    {
        AllocateNative(hugePages: false);
        NativeMemory.Clear(NativePointer, NativeBytes);
    }

    /// <summary>Checks every element of the native structure and frees it.</summary>
    [GlobalCleanup(Targets = [nameof(FillNative), nameof(FillNonTemporalLimit)])]
    public void CleanupNativeFill()
    {
        try
        {
            CheckNative($"{StructureName} fill: {StructureName} [{Parameter}]", $"every element of the {StructureName} holds the fill value", Value);
        }
        finally
        {
            FreeNative();
            Collect();
        }
    }

    /// <summary>Checks every element the fill policy's row wrote, and frees the structure.</summary>
    [GlobalCleanup(Target = nameof(FillPolicyChoice))]
    public void CleanupFillPolicyChoice()
    {
        try
        {
            CheckNative($"{StructureName} fill: fill policy's choice [{Parameter}]", $"every element of the {StructureName} holds the fill value", Value);
        }
        finally
        {
            FreeNative();
            Collect();
        }
    }

    /// <summary>Checks that every byte of the native structure holds the byte the machine-limit row writes, and frees it.</summary>
    [GlobalCleanup(Target = nameof(FillMachineLimit))]
    public void CleanupMachineLimitFill()
    {
        try
        {
            bool filled = true;
            ForEachNativeChunk((chunk, _) =>
            {
                BrokenResultSwitch.Corrupt(chunk);
                filled &= !MemoryMarshal.AsBytes(chunk).ContainsAnyExcept(FillValue.Pattern);
            });
            ResultChecks.Check($"{StructureName} fill: machine limit [{Parameter}]", filled, $"every byte of the {StructureName} holds 0x{FillValue.Pattern:X2}");
        }
        finally
        {
            FreeNative();
            Collect();
        }
    }

    // ---------------------------------------------------------------- create and fill

    /// <summary>Drops the array the previous operation created, allocates a managed array and fills it.</summary>
    /// <remarks>
    /// The array is not returned: BenchmarkDotNet keeps a benchmark's last result alive, and a
    /// multi-gigabyte array must not outlive its benchmark. It is kept in a field until the next
    /// operation drops it (before allocating, as a local would be dropped), so the cleanup can check
    /// the last timed operation's array.
    /// </remarks>
    [Benchmark(Baseline = true, Description = "Managed array: new T[] + Span<T>.Fill")]
    [BenchmarkCategory(Categories.Create, Categories.Fill)]
    [ManagedArrayRow]
    public void CreateManaged()
    {
        _managed = null;
        var array = new T[ManagedLength];
        array.AsSpan().Fill(Value);
        _managed = array;
    }

    /// <summary>Frees the structure the previous operation created, allocates the native structure (4 KiB pages) and fills it.</summary>
    public abstract void CreateNative();

    /// <summary>As <see cref="CreateNative"/>, on transparent huge pages.</summary>
    public abstract void CreateNativeHugePages();

    /// <summary>Frees the structure the previous operation created and creates one with every element set to the value by its constructor (4 KiB pages; no zeroing pass).</summary>
    public abstract void CreateNativeWithValue();

    /// <summary>As <see cref="CreateNativeWithValue"/>, on transparent huge pages.</summary>
    public abstract void CreateNativeWithValueHugePages();

    /// <summary>Checks every element of the array the last timed operation created, and drops it.</summary>
    [GlobalCleanup(Target = nameof(CreateManaged))]
    public void CleanupCreateManaged()
    {
        try
        {
            string name = $"{StructureName} create: managed array [{ManagedLength}]";
            T[]? array = _managed;
            ResultChecks.Check(name, array is not null, "the last timed operation left the array it created");
            BrokenResultSwitch.Corrupt(array.AsSpan());
            ResultChecks.Equal(name, ManagedLength, array!.Length, "elements of the array created");
            ResultChecks.Check(name, !array.AsSpan().ContainsAnyExcept(Value), "every element of a created array holds the fill value");
        }
        finally
        {
            _managed = null;
            Collect();
        }
    }

    /// <summary>Checks every element of the structure the last timed native create (4 KiB pages) made, and frees it.</summary>
    [GlobalCleanup(Target = nameof(CreateNative))]
    public void CleanupCreateNative() => CheckCreatedNative("4 KiB pages");

    /// <summary>Checks every element of the structure the last timed native create (huge pages) made, and frees it.</summary>
    [GlobalCleanup(Target = nameof(CreateNativeHugePages))]
    public void CleanupCreateNativeHugePages() => CheckCreatedNative("huge pages");

    /// <summary>Checks every element of the structure the last timed create-with-value (4 KiB pages) made, and frees it.</summary>
    [GlobalCleanup(Target = nameof(CreateNativeWithValue))]
    public void CleanupCreateNativeWithValue() => CheckCreatedNative("created with the value, 4 KiB pages");

    /// <summary>Checks every element of the structure the last timed create-with-value (huge pages) made, and frees it.</summary>
    [GlobalCleanup(Target = nameof(CreateNativeWithValueHugePages))]
    public void CleanupCreateNativeWithValueHugePages() => CheckCreatedNative("created with the value, huge pages");

    private void CheckCreatedNative(string pages)
    {
        try
        {
            long elements = 0;
            ForEachNativeChunk((chunk, _) => elements += chunk.Length);
            string name = $"{StructureName} create: {StructureName} ({pages}) [{Parameter}]";
            ResultChecks.Equal(name, Parameter, elements, "elements of the structure created");
            CheckNative(name, "every element of a created structure holds the fill value", Value);
        }
        finally
        {
            FreeNative();
            Collect();
        }
    }

    /// <summary>Checks that every element of the native structure equals <paramref name="value"/> (after the test switch's corruption, if on).</summary>
    private void CheckNative(string name, string description, T value)
    {
        bool allEqual = true;
        ForEachNativeChunk((chunk, _) =>
        {
            BrokenResultSwitch.Corrupt(chunk);
            allEqual &= !chunk.ContainsAnyExcept(value);
        });
        ResultChecks.Check(name, allEqual, description);
    }

    // ---------------------------------------------------------------- the native structure

    /// <summary>Allocates the structure of <see cref="Parameter"/> elements the fill benchmarks use.</summary>
    protected abstract void AllocateNative(bool hugePages);

    /// <summary>Frees the structure from <see cref="AllocateNative"/>.</summary>
    protected abstract void FreeNative();

    /// <summary>The structure's memory.</summary>
    protected abstract void* NativePointer { get; }

    /// <summary>The structure's size in bytes.</summary>
    protected nuint NativeBytes => (nuint)Parameter * (nuint)sizeof(T);

    /// <summary>
    /// Calls <paramref name="visit"/> for every chunk of the structure's elements in order, under a
    /// lease of the structure (nothing when there is no structure).
    /// </summary>
    protected abstract void ForEachNativeChunk(ChunkVisitor<T> visit);

    /// <summary>A full, compacting collection, so the next benchmark starts without this one's garbage.</summary>
    protected static void Collect() => MallocBenchmarks<byte>.Collect();
}
