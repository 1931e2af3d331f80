using jemalloc.Mallctl;

namespace jemalloc;

public static unsafe partial class Jem
{
    /// <summary>
    /// Calls <c>je_mallctl</c> with raw pointers. This is a pointer-level API, as unsafe as
    /// <see cref="System.Runtime.InteropServices.NativeMemory"/>: jemalloc reads and writes through
    /// the pointers given, so a wrong pointer or length, or a key whose value is itself a pointer
    /// (extent hooks, <c>experimental.*</c> hooks), can crash the process. Prefer the typed
    /// <see cref="GetMallctl{T}(string)"/>, <see cref="SetMallctl{T}(string, T)"/>,
    /// <see cref="MallctlKey{T}"/> and <see cref="MallctlKeys"/>, which check types and refuse such keys.
    /// </summary>
    /// <remarks>
    /// Still refused here (they would corrupt the library's own state): <c>arena.&lt;i&gt;.reset</c>
    /// and <c>arena.&lt;i&gt;.destroy</c> of an arena that belongs to a <see cref="JemArena"/> or holds
    /// live structures, or of all arenas at once; <c>arena.4096.*</c>/<c>arena.4097.*</c> keys jemalloc
    /// does not support for "all"/"destroyed" (it reads past its arena table); <c>thread.arena</c>
    /// onto a <see cref="JemArena"/>'s arena; <c>tcache.flush</c>/<c>tcache.destroy</c> of an id not
    /// created through this library's <c>tcache.create</c>. A null <paramref name="oldLength"/> for
    /// <c>tcache.create</c>, <c>arenas.create</c>, <c>experimental.arenas_create_ext</c> or
    /// <c>experimental.batch_alloc</c> returns <c>EINVAL</c> (jemalloc would write through it).
    /// </remarks>
    /// <returns>0, or the error number jemalloc returned (see <see cref="MallctlError"/>).</returns>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty.</exception>
    /// <exception cref="MallctlException">The call is refused (see the remarks); nothing was called.</exception>
    public static int Mallctl(string name, void* oldValue, nuint* oldLength, void* newValue, nuint newLength)
    {
        ArgumentException.ThrowIfNullOrEmpty(name);
        return MallctlClient.Raw(name, oldValue, oldLength, newValue, newLength);
    }

    /// <summary>Reads a mallctl value whose C type matches <typeparamref name="T"/> (bool: 1 byte; unsigned: uint or int; uint64_t/int64_t: ulong or long; size_t/ssize_t: nuint or nint, or ulong/long on 64-bit).</summary>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty.</exception>
    /// <exception cref="MallctlException">
    /// The key does not exist; <typeparamref name="T"/> does not match its C type (the message names the type
    /// expected); or the key is refused: a command, a key taking or returning a raw pointer or struct, or a
    /// key the library protects.
    /// </exception>
    /// <exception cref="NotSupportedException"><typeparamref name="T"/> is not one of bool, int, uint, long, ulong, nint, nuint.</exception>
    public static T GetMallctl<T>(string name)
        where T : unmanaged
    {
        ArgumentException.ThrowIfNullOrEmpty(name);
        return MallctlClient.Read<T>(name);
    }

    /// <summary>Writes a mallctl value whose C type matches <typeparamref name="T"/>.</summary>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty.</exception>
    /// <exception cref="MallctlException">
    /// The key does not exist or is read-only; <typeparamref name="T"/> does not match its C type or the value is
    /// not allowed; or the call is refused (see <see cref="MallctlKeys"/>: e.g. <c>tcache.destroy</c> of a cache
    /// not created through the library, <c>thread.arena</c> onto a <see cref="JemArena"/>'s arena, <c>arenas.create</c>).
    /// </exception>
    /// <exception cref="NotSupportedException"><typeparamref name="T"/> is not one of bool, int, uint, long, ulong, nint, nuint.</exception>
    public static void SetMallctl<T>(string name, T value)
        where T : unmanaged
    {
        ArgumentException.ThrowIfNullOrEmpty(name);
        MallctlClient.Write(name, value);
    }

    /// <summary>Writes a mallctl value and returns the value it replaced, in one call.</summary>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty.</exception>
    /// <exception cref="MallctlException">As for <see cref="SetMallctl{T}(string, T)"/>; also for keys that cannot be read and written at once (<c>tcache.*</c>, <c>arenas.create</c>).</exception>
    /// <exception cref="NotSupportedException"><typeparamref name="T"/> is not one of bool, int, uint, long, ulong, nint, nuint.</exception>
    public static T ExchangeMallctl<T>(string name, T value)
        where T : unmanaged
    {
        ArgumentException.ThrowIfNullOrEmpty(name);
        return MallctlClient.Exchange(name, value);
    }

    /// <summary>Reads a mallctl value of C type <c>const char*</c>.</summary>
    /// <returns>The string, or <see langword="null"/> where jemalloc holds a null pointer.</returns>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty.</exception>
    /// <exception cref="MallctlException">The key does not exist or is not a string (the message names its type).</exception>
    public static string? GetMallctlString(string name)
    {
        ArgumentException.ThrowIfNullOrEmpty(name);
        return MallctlClient.ReadString(name);
    }

    /// <summary>Writes a mallctl value of C type <c>const char*</c> (jemalloc copies the string).</summary>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty.</exception>
    /// <exception cref="ArgumentNullException"><paramref name="value"/> is null.</exception>
    /// <exception cref="MallctlException">The key does not exist, is read-only, or does not take a string.</exception>
    public static void SetMallctlString(string name, string value)
    {
        ArgumentException.ThrowIfNullOrEmpty(name);
        ArgumentNullException.ThrowIfNull(value);
        MallctlClient.WriteString(name, value);
    }

    /// <summary>Runs a mallctl command that takes and returns nothing, e.g. <c>thread.tcache.flush</c> or <c>arena.0.purge</c>.</summary>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty.</exception>
    /// <exception cref="MallctlException">
    /// The key does not exist or is not a command; or it is refused: <c>arena.&lt;i&gt;.reset</c>/<c>destroy</c>
    /// of an arena that belongs to a <see cref="JemArena"/> (use <see cref="JemArena.Reset"/>/<see cref="JemArena.Dispose"/>),
    /// that holds live structures, or of all arenas (4096).
    /// </exception>
    public static void MallctlCommand(string name)
    {
        ArgumentException.ThrowIfNullOrEmpty(name);
        MallctlClient.Run(name);
    }

    /// <summary>
    /// Translates a name to a Management Information Base (<c>je_mallctlnametomib</c>) so that a key
    /// used often is looked up once. Name components that are numbers (e.g. the <c>0</c> of
    /// <c>arena.0.purge</c>) can be replaced afterwards with <see cref="MallctlMib{T}.WithIndex"/>.
    /// The MIB's calls are checked as the same calls by name are.
    /// </summary>
    /// <exception cref="MallctlException">
    /// The name does not exist, holds a NUL, or has a component jemalloc would read as another index (<c>+0</c>,
    /// <c>0x</c>, <c> 0</c>), as <see cref="Mallctl(string, void*, nuint*, void*, nuint)"/> refuses it.
    /// </exception>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty.</exception>
    public static MallctlMib<T> MallctlNameToMib<T>(string name)
    {
        ArgumentException.ThrowIfNullOrEmpty(name);
        return new(name, MallctlClient.LookupMib(name));
    }

    /// <summary>
    /// Calls <c>je_mallctlnametomib</c> directly, after the name check of <see cref="Mallctl(string, void*, nuint*, void*, nuint)"/>.
    /// </summary>
    /// <returns>0, or the error number jemalloc returned (<c>ENOENT</c> for an unknown name, <c>EINVAL</c> when <paramref name="mib"/> is too short).</returns>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty.</exception>
    /// <exception cref="MallctlException">
    /// The name holds a NUL, or has a component jemalloc would read as another index (<c>+0</c>, <c>0x</c>, <c> 0</c>);
    /// jemalloc was not called.
    /// </exception>
    public static int MallctlNameToMib(string name, Span<nuint> mib, out int mibLength)
    {
        ArgumentException.ThrowIfNullOrEmpty(name);
        return MallctlClient.NameToMib(name, mib, out mibLength);
    }

    /// <summary>
    /// Calls <c>je_mallctlbymib</c> with raw pointers and a MIB from <see cref="MallctlNameToMib(string, Span{nuint}, out int)"/>.
    /// A pointer-level API as unsafe as <see cref="Mallctl(string, void*, nuint*, void*, nuint)"/>, with the same refusals.
    /// </summary>
    /// <returns>0, or the error number jemalloc returned.</returns>
    /// <exception cref="ArgumentException"><paramref name="mib"/> is empty.</exception>
    /// <exception cref="MallctlException">The call is refused (see <see cref="Mallctl(string, void*, nuint*, void*, nuint)"/>); nothing was called.</exception>
    public static int MallctlByMib(ReadOnlySpan<nuint> mib, void* oldValue, nuint* oldLength, void* newValue, nuint newLength)
    {
        if (mib.IsEmpty)
        {
            throw new ArgumentException("The MIB is empty.", nameof(mib));
        }

        return MallctlClient.RawByMib(mib, oldValue, oldLength, newValue, newLength);
    }
}
