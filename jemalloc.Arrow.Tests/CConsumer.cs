using System.Runtime.InteropServices;
using Apache.Arrow.C;

namespace jemalloc.Arrow.Tests;

/// <summary>
/// native/read_export.c, a C consumer of the Arrow C Data Interface written from the specification,
/// compiled with gcc (which ./build.sh needs for the native build too) into a shared library once per
/// test run and called through <see cref="NativeLibrary"/>.
/// </summary>
internal static unsafe class CConsumer
{
    private static readonly TimeSpan CompileTimeout = TimeSpan.FromMinutes(2);
    private static readonly Lazy<nint> Library = new(Build);

    /// <summary>What the C side saw: the layout of <c>struct read_result</c>.</summary>
    [StructLayout(LayoutKind.Sequential)]
    internal struct Result
    {
        public long Length;
        public long NullCount;
        public long DeclaredNullCount;
        public long IntSum;
        public double DoubleSum;
        public nint ValuesAddress;
        public nint ValidityAddress;
        public int ZeroCopy;
        public int Released;
        public fixed byte Format[8];
        public fixed byte Error[128];
        public ulong WideSumLow;
        public long WideSumHigh;

        /// <summary>A decimal128 column's sum of valid values, as the C side added it up.</summary>
        public readonly Int128 DecimalSum => new((ulong)WideSumHigh, WideSumLow);

        public readonly string FormatText()
        {
            fixed (byte* text = Format)
            {
                return Utf8(text);
            }
        }

        public readonly string ErrorText()
        {
            fixed (byte* text = Error)
            {
                return Utf8(text);
            }
        }
    }

    /// <summary>Has the C consumer read and release the exported structures; fails the test if it reports an error.</summary>
    internal static Result Read(CArrowSchema* schema, CArrowArray* array, nint expectedValues)
    {
        var read = (delegate* unmanaged<CArrowSchema*, CArrowArray*, void*, Result*, int>)NativeLibrary.GetExport(Library.Value, "read_export");
        Result result;
        int status = read(schema, array, (void*)expectedValues, &result);
        Assert.True(status == 0, $"read_export failed: {result.ErrorText()}");
        return result;
    }

    /// <summary>What the C side saw of a string or binary array: the layout of <c>struct string_result</c>.</summary>
    [StructLayout(LayoutKind.Sequential)]
    internal struct StringResult
    {
        public long Length;
        public long NullCount;
        public long Bytes;
        public uint Hash;
        public int ZeroCopy;
        public int Released;
        public fixed byte Format[8];
        public fixed byte Error[128];

        public readonly string FormatText()
        {
            fixed (byte* text = Format)
            {
                return Utf8(text);
            }
        }

        public readonly string ErrorText()
        {
            fixed (byte* text = Error)
            {
                return Utf8(text);
            }
        }
    }

    /// <summary>Has the C consumer read an exported string or binary array in place and release it; fails the test if it reports an error.</summary>
    internal static StringResult ReadStrings(CArrowSchema* schema, CArrowArray* array, nint expectedData)
    {
        var read = (delegate* unmanaged<CArrowSchema*, CArrowArray*, void*, StringResult*, int>)NativeLibrary.GetExport(Library.Value, "read_string_export");
        StringResult result;
        int status = read(schema, array, (void*)expectedData, &result);
        Assert.True(status == 0, $"read_string_export failed: {result.ErrorText()}");
        return result;
    }

    /// <summary>What the C side saw of a dictionary array: the layout of <c>struct dictionary_result</c>.</summary>
    [StructLayout(LayoutKind.Sequential)]
    internal struct DictionaryResult
    {
        public long Length;
        public long NullCount;
        public long DeclaredNullCount;
        public long NullValueRows;
        public long DictionaryLength;
        public long Bytes;
        public nint IndicesAddress;
        public nint ValidityAddress;
        public uint Hash;
        public int ZeroCopy;
        public int Released;
        public int Ordered;
        public fixed byte Format[8];
        public fixed byte ValueFormat[8];
        public fixed byte Error[128];

        public readonly string FormatText()
        {
            fixed (byte* text = Format)
            {
                return Utf8(text);
            }
        }

        public readonly string ValueFormatText()
        {
            fixed (byte* text = ValueFormat)
            {
                return Utf8(text);
            }
        }

        public readonly string ErrorText()
        {
            fixed (byte* text = Error)
            {
                return Utf8(text);
            }
        }
    }

    /// <summary>Has the C consumer read an exported dictionary array in place and release it; fails the test if it reports an error.</summary>
    internal static DictionaryResult ReadDictionary(CArrowSchema* schema, CArrowArray* array, nint expectedIndices)
    {
        int status = TryReadDictionary(schema, array, expectedIndices, out DictionaryResult result);
        Assert.True(status == 0, $"read_dictionary_export failed: {result.ErrorText()}");
        return result;
    }

    /// <summary>Has the C consumer read an exported dictionary array and release it; returns its status (0, or 1 with the result's error set).</summary>
    internal static int TryReadDictionary(CArrowSchema* schema, CArrowArray* array, nint expectedIndices, out DictionaryResult result)
    {
        var read = (delegate* unmanaged<CArrowSchema*, CArrowArray*, void*, DictionaryResult*, int>)NativeLibrary.GetExport(Library.Value, "read_dictionary_export");
        DictionaryResult seen;
        int status = read(schema, array, (void*)expectedIndices, &seen);
        result = seen;
        return status;
    }

    // A NUL-terminated string of a result's fixed buffer.
    private static string Utf8(byte* text) => Marshal.PtrToStringUTF8((nint)text) ?? string.Empty;

    private static nint Build()
    {
        string source = Path.Combine(AppContext.BaseDirectory, "native", "read_export.c");
        string folder = Directory.CreateTempSubdirectory("jemalloc-arrow-c-consumer-").FullName;
        string library = Path.Combine(folder, "libreadexport.so");
        nint handle;
        try
        {
            string compiler = Environment.GetEnvironmentVariable("JEMALLOC_NET_TEST_CC") is { Length: > 0 } cc ? cc : "gcc";
            (int exitCode, string output, string error) = ExternalProcess.Run(
                compiler, ["-std=c11", "-Wall", "-Wextra", "-Werror", "-O2", "-shared", "-fPIC", "-o", library, source], CompileTimeout);
            Assert.True(exitCode == 0, $"{compiler} (which ./build.sh installs for the native build) could not compile {source}: {output}{error}");
            handle = NativeLibrary.Load(library);
        }
        finally
        {
            // The library stays loaded for the rest of the run; its file is not needed once it is mapped.
            Directory.Delete(folder, recursive: true);
        }

        return handle;
    }
}
