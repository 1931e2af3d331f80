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
/// never alive together.
/// </remarks>
public abstract unsafe class StructureBenchmarks<T> where T : unmanaged, IEquatable<T>
{
    private T[]? _managed;
    private T _firstSeen;
    private T _lastSeen;
    private long _lengthSeen;

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
    public void FillManaged() => _managed.AsSpan().Fill(Value);

    /// <summary>Checks and drops the managed array.</summary>
    [GlobalCleanup(Target = nameof(FillManaged))]
    public void CleanupManagedFill()
    {
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

    /// <summary>Allocates the native structure and pages it in.</summary>
    [GlobalSetup(Targets = [nameof(FillNative), nameof(FillMachineLimit), nameof(FillNonTemporalLimit)])]
    public void SetupNativeFill()
    {
        AllocateNative(hugePages: false);
        NativeMemory.Clear(NativePointer, NativeBytes);
    }

    /// <summary>Checks and frees the native structure.</summary>
    [GlobalCleanup(Targets = [nameof(FillNative), nameof(FillMachineLimit), nameof(FillNonTemporalLimit)])]
    public void CleanupNativeFill()
    {
        try
        {
            ResultChecks.Check($"{StructureName} fill: {StructureName} [{Parameter}]", NativeAllEqual(Value), $"every element of the {StructureName} holds the fill value");
        }
        finally
        {
            FreeNative();
            Collect();
        }
    }

    // ---------------------------------------------------------------- create and fill

    /// <summary>Allocates a managed array and fills it, then drops it.</summary>
    /// <remarks>
    /// The array is not returned: BenchmarkDotNet keeps a benchmark's last result alive, and a
    /// multi-gigabyte array must not outlive its benchmark.
    /// </remarks>
    [Benchmark(Baseline = true, Description = "Managed array: new T[] + Span<T>.Fill")]
    [BenchmarkCategory(Categories.Create, Categories.Fill)]
    public void CreateManaged()
    {
        var array = new T[ManagedLength];
        array.AsSpan().Fill(Value);
        Observe(array[0], array[^1], array.Length);
    }

    /// <summary>Allocates the native structure (4 KiB pages), fills it and frees it.</summary>
    public abstract void CreateNative();

    /// <summary>Allocates the native structure on transparent huge pages, fills it and frees it.</summary>
    public abstract void CreateNativeHugePages();

    /// <summary>Creates the structure with every element set to the value by its constructor (4 KiB pages; no zeroing pass), then frees it.</summary>
    public abstract void CreateNativeWithValue();

    /// <summary>As <see cref="CreateNativeWithValue"/>, on transparent huge pages.</summary>
    public abstract void CreateNativeWithValueHugePages();

    /// <summary>Forgets the last operation's observations.</summary>
    [GlobalSetup(Targets = [nameof(CreateManaged), nameof(CreateNative), nameof(CreateNativeHugePages), nameof(CreateNativeWithValue), nameof(CreateNativeWithValueHugePages)])]
    public void SetupCreate() => _lengthSeen = 0;

    /// <summary>Checks what the last operation created.</summary>
    [GlobalCleanup(Targets = [nameof(CreateManaged), nameof(CreateNative), nameof(CreateNativeHugePages), nameof(CreateNativeWithValue), nameof(CreateNativeWithValueHugePages)])]
    public void CleanupCreate()
    {
        string name = $"{StructureName} create [{Parameter}]";
        ResultChecks.Check(name, _lengthSeen == ManagedLength || _lengthSeen == Parameter, $"the last structure created has {_lengthSeen} elements");
        ResultChecks.Check(name, _firstSeen.Equals(Value) && _lastSeen.Equals(Value), "its first and last elements hold the fill value");
        Collect();
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

    /// <summary>Whether every element of the structure equals <paramref name="value"/>.</summary>
    protected abstract bool NativeAllEqual(T value);

    /// <summary>Records what an operation produced, for the check after the run.</summary>
    protected void Observe(T first, T last, long length)
    {
        _firstSeen = first;
        _lastSeen = last;
        _lengthSeen = length;
    }

    /// <summary>Whether every element of <paramref name="memory"/> (any length) equals <paramref name="value"/>.</summary>
    protected static bool AllEqual(T* memory, long length, T value)
    {
        for (long start = 0; start < length; start += int.MaxValue / 2)
        {
            int count = (int)Math.Min(length - start, int.MaxValue / 2);
            if (new ReadOnlySpan<T>(memory + start, count).ContainsAnyExcept(value))
            {
                return false;
            }
        }

        return true;
    }

    /// <summary>A full, compacting collection, so the next benchmark starts without this one's garbage.</summary>
    protected static void Collect() => MallocBenchmarks<byte>.Collect();
}
