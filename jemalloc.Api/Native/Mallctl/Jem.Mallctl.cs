using System.Buffers;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Text;
using jemalloc.Interop;

namespace jemalloc;

public static unsafe partial class Jem
{
    private const int StackNameBytes = 256;

    /// <summary>
    /// Calls <c>je_mallctl</c> directly. Prefer the typed <see cref="GetMallctl{T}(string)"/>,
    /// <see cref="SetMallctl{T}(string, T)"/>, <see cref="MallctlKey{T}"/> and <see cref="MallctlKeys"/>.
    /// </summary>
    /// <returns>0, or the error number jemalloc returned (see <see cref="MallctlError"/>).</returns>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty.</exception>
    public static int Mallctl(string name, void* oldValue, nuint* oldLength, void* newValue, nuint newLength)
    {
        ArgumentException.ThrowIfNullOrEmpty(name);
        byte[]? rented = null;
        Span<byte> buffer = Encoding.UTF8.GetMaxByteCount(name.Length) < StackNameBytes
            ? stackalloc byte[StackNameBytes]
            : (rented = ArrayPool<byte>.Shared.Rent(Encoding.UTF8.GetMaxByteCount(name.Length) + 1));
        try
        {
            int length = Encoding.UTF8.GetBytes(name, buffer);
            buffer[length] = 0;
            fixed (byte* utf8Name = buffer)
            {
                return JemNative.Mallctl(utf8Name, oldValue, oldLength, newValue, newLength);
            }
        }
        finally
        {
            if (rented is not null)
            {
                ArrayPool<byte>.Shared.Return(rented);
            }
        }
    }

    /// <summary>Reads a mallctl value whose C type has the size of <typeparamref name="T"/> (bool: 1 byte; unsigned: uint; uint64_t: ulong; size_t: nuint; ssize_t: nint).</summary>
    /// <exception cref="MallctlException">The key does not exist, or <typeparamref name="T"/> does not match its type.</exception>
    /// <exception cref="NotSupportedException"><typeparamref name="T"/> is not one of bool, int, uint, long, ulong, nint, nuint.</exception>
    public static T GetMallctl<T>(string name)
        where T : unmanaged
    {
        MallctlValue.ThrowIfUnsupported<T>();
        T value = default;
        nuint length = (nuint)sizeof(T);
        ThrowIfFailed(Mallctl(name, &value, &length, null, 0), name, typeof(T));
        return value;
    }

    /// <summary>Writes a mallctl value whose C type has the size of <typeparamref name="T"/>.</summary>
    /// <exception cref="MallctlException">The key does not exist, is read-only, or <typeparamref name="T"/> or the value does not fit it.</exception>
    /// <exception cref="NotSupportedException"><typeparamref name="T"/> is not one of bool, int, uint, long, ulong, nint, nuint.</exception>
    public static void SetMallctl<T>(string name, T value)
        where T : unmanaged
    {
        MallctlValue.ThrowIfUnsupported<T>();
        ThrowIfFailed(Mallctl(name, null, null, &value, (nuint)sizeof(T)), name, typeof(T));
    }

    /// <summary>Writes a mallctl value and returns the value it replaced, in one call.</summary>
    /// <exception cref="MallctlException">The key does not exist, is read-only, or <typeparamref name="T"/> or the value does not fit it.</exception>
    /// <exception cref="NotSupportedException"><typeparamref name="T"/> is not one of bool, int, uint, long, ulong, nint, nuint.</exception>
    public static T ExchangeMallctl<T>(string name, T value)
        where T : unmanaged
    {
        MallctlValue.ThrowIfUnsupported<T>();
        T old = default;
        nuint length = (nuint)sizeof(T);
        ThrowIfFailed(Mallctl(name, &old, &length, &value, (nuint)sizeof(T)), name, typeof(T));
        return old;
    }

    /// <summary>Reads a mallctl value of C type <c>const char*</c>.</summary>
    /// <returns>The string, or <see langword="null"/> where jemalloc holds a null pointer.</returns>
    /// <exception cref="MallctlException">The key does not exist or is not a string.</exception>
    public static string? GetMallctlString(string name)
    {
        ArgumentException.ThrowIfNullOrEmpty(name);
        MallctlStringKeys.ThrowIfNotString(name);
        byte* value = null;
        nuint length = (nuint)sizeof(byte*);
        ThrowIfFailed(Mallctl(name, &value, &length, null, 0), name, typeof(string));
        return Marshal.PtrToStringUTF8((nint)value);
    }

    /// <summary>Writes a mallctl value of C type <c>const char*</c> (jemalloc copies the string).</summary>
    /// <exception cref="MallctlException">The key does not exist, is read-only, or does not take a string.</exception>
    public static void SetMallctlString(string name, string value)
    {
        ArgumentException.ThrowIfNullOrEmpty(name);
        ArgumentNullException.ThrowIfNull(value);
        MallctlStringKeys.ThrowIfNotString(name);
        byte* utf8 = (byte*)Marshal.StringToCoTaskMemUTF8(value);
        try
        {
            ThrowIfFailed(Mallctl(name, null, null, &utf8, (nuint)sizeof(byte*)), name, typeof(string));
        }
        finally
        {
            Marshal.FreeCoTaskMem((nint)utf8);
        }
    }

    /// <summary>Runs a mallctl command that takes and returns nothing, e.g. <c>thread.tcache.flush</c> or <c>arena.0.purge</c>.</summary>
    /// <exception cref="MallctlException">The key does not exist or is not a command.</exception>
    public static void MallctlCommand(string name) => ThrowIfFailed(Mallctl(name, null, null, null, 0), name, null);

    /// <summary>
    /// Translates a name to a Management Information Base (<c>je_mallctlnametomib</c>) so that a key
    /// used often is looked up once. Name components that are numbers (e.g. the <c>0</c> of
    /// <c>arena.0.purge</c>) can be replaced afterwards with <see cref="MallctlMib{T}.WithIndex"/>.
    /// </summary>
    /// <exception cref="MallctlException">The name does not exist.</exception>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty.</exception>
    public static MallctlMib<T> MallctlNameToMib<T>(string name) => new(name, LookupMib(name));

    /// <summary>
    /// Calls <c>je_mallctlnametomib</c> directly.
    /// </summary>
    /// <returns>0, or the error number jemalloc returned (<c>ENOENT</c> for an unknown name, <c>EINVAL</c> when <paramref name="mib"/> is too short).</returns>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty.</exception>
    public static int MallctlNameToMib(string name, Span<nuint> mib, out int mibLength)
    {
        ArgumentException.ThrowIfNullOrEmpty(name);
        byte[] utf8 = NullTerminatedUtf8(name);
        nuint length = (nuint)mib.Length;
        int result;
        fixed (byte* utf8Name = utf8)
        fixed (nuint* mibPointer = mib)
        {
            result = JemNative.MallctlNameToMib(utf8Name, mibPointer, &length);
        }

        mibLength = (int)length;
        return result;
    }

    /// <summary>Calls <c>je_mallctlbymib</c> directly with a MIB from <see cref="MallctlNameToMib(string, Span{nuint}, out int)"/>.</summary>
    /// <returns>0, or the error number jemalloc returned.</returns>
    /// <exception cref="ArgumentException"><paramref name="mib"/> is empty.</exception>
    public static int MallctlByMib(ReadOnlySpan<nuint> mib, void* oldValue, nuint* oldLength, void* newValue, nuint newLength)
    {
        if (mib.IsEmpty)
        {
            throw new ArgumentException("The MIB is empty.", nameof(mib));
        }

        fixed (nuint* mibPointer = mib)
        {
            return JemNative.MallctlByMib(mibPointer, (nuint)mib.Length, oldValue, oldLength, newValue, newLength);
        }
    }

    internal static nuint[] LookupMib(string name)
    {
        // jemalloc's deepest names have 7 components.
        Span<nuint> mib = stackalloc nuint[8];
        ThrowIfFailed(MallctlNameToMib(name, mib, out int length), name, null);
        return mib[..length].ToArray();
    }

    internal static void ThrowIfFailed(int result, string name, Type? valueType)
    {
        if (result != 0)
        {
            ThrowMallctl(result, name, valueType);
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void ThrowMallctl(int result, string name, Type? valueType)
    {
        var error = (MallctlError)result;
        string? detail = error == MallctlError.InvalidValue && valueType is not null
            ? $"It was accessed as {valueType.Name}" + (valueType == typeof(string) ? "." : $" ({SizeOfValue(valueType)} bytes).")
            : null;
        throw new MallctlException(name, error, detail);
    }

    private static int SizeOfValue(Type type) =>
        type == typeof(bool) || type == typeof(byte) ? 1 : type == typeof(int) || type == typeof(uint) ? 4 : 8;

    private static byte[] NullTerminatedUtf8(string value)
    {
        byte[] bytes = new byte[Encoding.UTF8.GetByteCount(value) + 1];
        Encoding.UTF8.GetBytes(value, bytes);
        return bytes;
    }
}
