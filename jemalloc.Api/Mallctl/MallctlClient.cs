using System.Buffers;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Text;
using jemalloc.Interop;

namespace jemalloc.Mallctl;

/// <summary>
/// The one mallctl client: every public entry point (<see cref="Jem"/>'s mallctl methods,
/// <see cref="MallctlKey{T}"/>, <see cref="MallctlCommand"/>, <see cref="MallctlMib{T}"/>) calls
/// jemalloc through here, after <see cref="MallctlPolicy"/>, and here the library's registries
/// learn of caches and arenas created or destroyed. <see cref="Native"/> is for the library's own
/// calls on what it owns (a <see cref="JemArena"/>'s reset, its thread caches), which the policy refuses to users.
/// </summary>
internal static unsafe class MallctlClient
{
    private const int StackNameBytes = 256;

    /// <summary>Reads a typed value (<typeparamref name="T"/> a mallctl value type or string).</summary>
    internal static T Read<T>(string name, nuint[]? mib = null)
    {
        if (typeof(T) == typeof(string))
        {
            return (T)(object)ReadString(name, mib)!;
        }

        MallctlValue.ThrowIfUnsupported<T>();
        MallctlTarget target = MallctlPolicy.CheckTyped(name, MallctlOperation.Read, typeof(T));
        if (target.Pattern == "arenas.create")
        {
            ArenaDirectory.ThrowIfFull(name);
        }

        T value = default!;
        nuint length = (nuint)Unsafe.SizeOf<T>();
        Check(Call(name, mib, Unsafe.AsPointer(ref value), &length, null, 0), name, typeof(T));
        if (target.Pattern == "tcache.create")
        {
            ThreadCacheRegistry.AddUser(Unsafe.As<T, uint>(ref value));
        }
        else if (target.Pattern == "arenas.create")
        {
            ArenaDirectory.MarkCreated(Unsafe.As<T, uint>(ref value));
        }

        return value;
    }

    /// <summary>Writes a typed value.</summary>
    internal static void Write<T>(string name, T value, nuint[]? mib = null)
    {
        if (typeof(T) == typeof(string))
        {
            WriteString(name, (string)(object)value!, mib);
            return;
        }

        MallctlValue.ThrowIfUnsupported<T>();
        MallctlTarget target = MallctlPolicy.CheckTyped(name, MallctlOperation.Write, typeof(T), AsUInt(ref value));
        bool destroying = target.Pattern == "tcache.destroy";
        if (destroying && !ThreadCacheRegistry.TryRemoveUser(AsUInt(ref value)))
        {
            MallctlPolicy.ThrowRefused(name, ThreadCacheRegistry.DescribeRefusal(AsUInt(ref value)));
        }

        int result = Call(name, mib, null, null, Unsafe.AsPointer(ref value), (nuint)Unsafe.SizeOf<T>());
        if (destroying && result != 0)
        {
            ThreadCacheRegistry.AddUser(AsUInt(ref value));
        }

        Check(result, name, typeof(T));
    }

    /// <summary>Writes a typed value and returns the one it replaced.</summary>
    internal static T Exchange<T>(string name, T value, nuint[]? mib = null)
    {
        MallctlValue.ThrowIfUnsupported<T>();
        if (typeof(T) == typeof(string))
        {
            MallctlPolicy.ThrowRefused(name, "A string key cannot be exchanged in one call; read it, then write it.");
        }

        _ = MallctlPolicy.CheckTyped(name, MallctlOperation.Exchange, typeof(T), AsUInt(ref value));
        T old = default!;
        nuint length = (nuint)Unsafe.SizeOf<T>();
        Check(Call(name, mib, Unsafe.AsPointer(ref old), &length, Unsafe.AsPointer(ref value), (nuint)Unsafe.SizeOf<T>()), name, typeof(T));
        return old;
    }

    /// <summary>Runs a command.</summary>
    internal static void Run(string name, nuint[]? mib = null)
    {
        bool gated = UnownedArenaGate.GuardsCall(MallctlTarget.Resolve(name));
        if (gated)
        {
            UnownedArenaGate.EnterReset();
        }

        try
        {
            RunChecked(name, mib);
        }
        finally
        {
            if (gated)
            {
                UnownedArenaGate.ExitReset();
            }
        }
    }

    private static void RunChecked(string name, nuint[]? mib)
    {
        MallctlTarget target = MallctlPolicy.CheckTyped(name, MallctlOperation.Command, null);
        bool destroying = target.Pattern == "arena.{i}.destroy";
        if (destroying)
        {
            ArenaDirectory.Forget(target.Index);
        }

        int result = Call(name, mib, null, null, null, 0);
        if (destroying)
        {
            if (result == 0)
            {
                ArenaDirectory.MarkDestroyed(target.Index);
            }
            else
            {
                ArenaDirectory.MarkCreated(target.Index);
            }
        }

        Check(result, name, null);
    }

    /// <summary>Reads a <c>const char*</c> key.</summary>
    internal static string? ReadString(string name, nuint[]? mib = null)
    {
        _ = MallctlPolicy.CheckTyped(name, MallctlOperation.Read, typeof(string));
        byte* value = null;
        nuint length = (nuint)sizeof(byte*);
        Check(Call(name, mib, &value, &length, null, 0), name, typeof(string));
        return Marshal.PtrToStringUTF8((nint)value);
    }

    /// <summary>Writes a <c>const char*</c> key (jemalloc copies or parses the string during the call).</summary>
    internal static void WriteString(string name, string value, nuint[]? mib = null)
    {
        ArgumentNullException.ThrowIfNull(value);
        _ = MallctlPolicy.CheckTyped(name, MallctlOperation.Write, typeof(string));
        byte* utf8 = (byte*)Marshal.StringToCoTaskMemUTF8(value);
        try
        {
            Check(Call(name, mib, null, null, &utf8, (nuint)sizeof(byte*)), name, typeof(string));
        }
        finally
        {
            Marshal.FreeCoTaskMem((nint)utf8);
        }
    }

    /// <summary>A raw call by name: the library's guards, then jemalloc.</summary>
    internal static int Raw(string name, void* oldValue, nuint* oldLength, void* newValue, nuint newLength)
    {
        MallctlTarget target = MallctlTarget.Resolve(name);
        return CheckedRaw(target, null, oldValue, oldLength, newValue, newLength);
    }

    /// <summary>A raw call by MIB: the library's guards for the keys it protects, then jemalloc.</summary>
    internal static int RawByMib(ReadOnlySpan<nuint> mib, void* oldValue, nuint* oldLength, void* newValue, nuint newLength)
    {
        string? name = MallctlMibNames.NameOf(mib);
        if (name is null)
        {
            fixed (nuint* mibPointer = mib)
            {
                return JemNative.MallctlByMib(mibPointer, (nuint)mib.Length, oldValue, oldLength, newValue, newLength);
            }
        }

        MallctlTarget target = MallctlTarget.Resolve(name);
        return CheckedRaw(target, mib.ToArray(), oldValue, oldLength, newValue, newLength);
    }

    // The policy's check and the call, inside the unowned arenas' gate for a reset or destroy so
    // that no structure can be allocated in the arena between the two.
    private static int CheckedRaw(in MallctlTarget target, nuint[]? mib, void* oldValue, nuint* oldLength, void* newValue, nuint newLength)
    {
        bool gated = UnownedArenaGate.GuardsCall(target);
        if (gated)
        {
            UnownedArenaGate.EnterReset();
        }

        try
        {
            int refused = MallctlPolicy.CheckRaw(target, oldValue, oldLength, newValue, newLength);
            return refused != 0 ? refused : CallTracked(target, mib, oldValue, oldLength, newValue, newLength);
        }
        finally
        {
            if (gated)
            {
                UnownedArenaGate.ExitReset();
            }
        }
    }

    /// <summary>Calls jemalloc by name with no policy: only for the library's calls on what it owns.</summary>
    internal static int Native(string name, void* oldValue, nuint* oldLength, void* newValue, nuint newLength)
    {
        byte[]? rented = null;
        int maxBytes = Encoding.UTF8.GetMaxByteCount(name.Length) + 1;
        Span<byte> buffer = maxBytes <= StackNameBytes
            ? stackalloc byte[StackNameBytes]
            : (rented = ArrayPool<byte>.Shared.Rent(maxBytes));
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

    /// <summary>Runs a command on something the library owns, with no policy (e.g. a <see cref="JemArena"/>'s reset).</summary>
    /// <exception cref="MallctlException">jemalloc failed.</exception>
    internal static void RunNative(string name) => Check(Native(name, null, null, null, 0), name, null);

    /// <summary>Writes an unsigned with no policy (a <see cref="JemArena"/>'s own thread caches).</summary>
    /// <exception cref="MallctlException">jemalloc failed.</exception>
    internal static void WriteNative(string name, uint value) => Check(Native(name, null, null, &value, sizeof(uint)), name, typeof(uint));

    /// <summary>Calls <c>je_mallctlnametomib</c>, after the name check of every call by name.</summary>
    /// <returns>0, or the error number jemalloc returned.</returns>
    /// <exception cref="MallctlException">The name is null, holds a NUL, or has a component jemalloc would read as another index (<c>+0</c>, <c>0x</c>, <c> 0</c>).</exception>
    internal static int NameToMib(string name, Span<nuint> mib, out int mibLength)
    {
        // jemalloc would look up only the part before a NUL, and read "+0", "0x" or " 0" as index 0:
        // the MIB would stand for another key than the name its MallctlMib carries.
        _ = MallctlTarget.Resolve(name);
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

    /// <summary>The MIB of <paramref name="name"/>.</summary>
    /// <exception cref="MallctlException">The name does not exist, or is refused as by <see cref="NameToMib"/>.</exception>
    internal static nuint[] LookupMib(string name)
    {
        // jemalloc's deepest names have 7 components.
        Span<nuint> mib = stackalloc nuint[8];
        Check(NameToMib(name, mib, out int length), name, null);
        return mib[..length].ToArray();
    }

    private static byte[] NullTerminatedUtf8(string value)
    {
        byte[] bytes = new byte[Encoding.UTF8.GetByteCount(value) + 1];
        Encoding.UTF8.GetBytes(value, bytes);
        return bytes;
    }

    /// <summary>Throws the <see cref="MallctlException"/> for a failed call.</summary>
    internal static void Check(int result, string name, Type? valueType)
    {
        if (result != 0)
        {
            ThrowFailed(result, name, valueType);
        }
    }

    // The registries' bookkeeping around a raw call: a created cache or arena is recorded, a
    // destroyed one forgotten before jemalloc can hand its id out again.
    private static int CallTracked(in MallctlTarget target, nuint[]? mib, void* oldValue, nuint* oldLength, void* newValue, nuint newLength)
    {
        switch (target.Pattern)
        {
            case "tcache.destroy":
            {
                uint id = *(uint*)newValue; // CheckRaw let only a 4-byte write of a user cache through.
                if (!ThreadCacheRegistry.TryRemoveUser(id))
                {
                    MallctlPolicy.ThrowRefused(target.Name, ThreadCacheRegistry.DescribeRefusal(id));
                }

                int result = Call(target.Name, mib, oldValue, oldLength, newValue, newLength);
                if (result != 0)
                {
                    ThreadCacheRegistry.AddUser(id);
                }

                return result;
            }

            case "arena.{i}.destroy":
            {
                ArenaDirectory.Forget(target.Index);
                int result = Call(target.Name, mib, oldValue, oldLength, newValue, newLength);
                if (result == 0)
                {
                    ArenaDirectory.MarkDestroyed(target.Index);
                }
                else
                {
                    ArenaDirectory.MarkCreated(target.Index);
                }

                return result;
            }

            case "arenas.create":
                ArenaDirectory.ThrowIfFull(target.Name);
                goto default;

            default:
            {
                int result = Call(target.Name, mib, oldValue, oldLength, newValue, newLength);
                if (result == 0 && oldValue != null && oldLength != null && *oldLength == sizeof(uint))
                {
                    if (target.Pattern == "tcache.create")
                    {
                        ThreadCacheRegistry.AddUser(*(uint*)oldValue);
                    }
                    else if (target.Pattern == "arenas.create")
                    {
                        ArenaDirectory.MarkCreated(*(uint*)oldValue);
                    }
                }

                return result;
            }
        }
    }

    private static int Call(string name, nuint[]? mib, void* oldValue, nuint* oldLength, void* newValue, nuint newLength)
    {
        if (mib is null)
        {
            return Native(name, oldValue, oldLength, newValue, newLength);
        }

        fixed (nuint* mibPointer = mib)
        {
            return JemNative.MallctlByMib(mibPointer, (nuint)mib.Length, oldValue, oldLength, newValue, newLength);
        }
    }

    // The written value as a 4-byte unsigned, for the guards of keys of that type (tcache ids, thread.arena).
    private static uint AsUInt<T>(ref T value) => Unsafe.SizeOf<T>() == sizeof(uint) ? Unsafe.As<T, uint>(ref value) : uint.MaxValue;

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void ThrowFailed(int result, string name, Type? valueType)
    {
        var error = (MallctlError)result;
        string? detail = error == MallctlError.InvalidValue && valueType is not null
            ? $"It was accessed as {valueType.Name}" + (valueType == typeof(string) ? "." : $" ({SizeOfValue(valueType)} bytes).")
            : null;
        throw new MallctlException(name, error, detail);
    }

    private static int SizeOfValue(Type type) =>
        type == typeof(bool) || type == typeof(byte) ? 1 : type == typeof(int) || type == typeof(uint) ? 4 : 8;
}
