using System.Diagnostics.CodeAnalysis;

namespace jemalloc;

// The names the 2018 jemalloc.NET gave its mallctl accessors, kept working so existing code compiles,
// and marked obsolete so new code uses one casing (Mallctl) and the typed core (GetMallctl<T>/SetMallctl<T>).
[SuppressMessage("Naming", "CA1708:Identifiers should differ by more than case",
    Justification = "GetMallCtlString/SetMallCtlString are the earlier project's public names, kept as aliases of GetMallctlString/SetMallctlString; both are the same operation.")]
public static partial class Jem
{
    /// <summary>Reads the mallctl key <paramref name="name"/> of type C <c>int</c> or <c>unsigned</c> read as signed (4 bytes); same as <see cref="GetMallctl{T}(string)"/>.</summary>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty.</exception>
    /// <exception cref="MallctlException">The key does not exist or its type is not C <c>int</c> or <c>unsigned</c> read as signed (4 bytes).</exception>
    [Obsolete("The 2018 name; use Jem.GetMallctl<int>(name), or the typed key in MallctlKeys.")]
    public static int GetMallCtlInt32(string name) => GetMallctl<int>(name);

    /// <summary>Writes the mallctl key <paramref name="name"/> of type C <c>int</c> or <c>unsigned</c> read as signed (4 bytes); same as <see cref="SetMallctl{T}(string, T)"/>.</summary>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty.</exception>
    /// <exception cref="MallctlException">The key does not exist, is read-only, its type is not C <c>int</c> or <c>unsigned</c> read as signed (4 bytes), or the value is not allowed.</exception>
    [Obsolete("The 2018 name; use Jem.SetMallctl(name, value), or the typed key in MallctlKeys.")]
    public static void SetMallCtlInt32(string name, int value) => SetMallctl(name, value);

    /// <summary>Reads the mallctl key <paramref name="name"/> of type C <c>unsigned</c> (4 bytes); same as <see cref="GetMallctl{T}(string)"/>.</summary>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty.</exception>
    /// <exception cref="MallctlException">The key does not exist or its type is not C <c>unsigned</c> (4 bytes).</exception>
    [Obsolete("The 2018 name; use Jem.GetMallctl<uint>(name), or the typed key in MallctlKeys.")]
    public static uint GetMallCtlUInt32(string name) => GetMallctl<uint>(name);

    /// <summary>Writes the mallctl key <paramref name="name"/> of type C <c>unsigned</c> (4 bytes); same as <see cref="SetMallctl{T}(string, T)"/>.</summary>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty.</exception>
    /// <exception cref="MallctlException">The key does not exist, is read-only, its type is not C <c>unsigned</c> (4 bytes), or the value is not allowed.</exception>
    [Obsolete("The 2018 name; use Jem.SetMallctl(name, value), or the typed key in MallctlKeys.")]
    public static void SetMallCtlUInt32(string name, uint value) => SetMallctl(name, value);

    /// <summary>Reads the mallctl key <paramref name="name"/> of type C <c>int64_t</c> (8 bytes); same as <see cref="GetMallctl{T}(string)"/>.</summary>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty.</exception>
    /// <exception cref="MallctlException">The key does not exist or its type is not C <c>int64_t</c> (8 bytes).</exception>
    [Obsolete("The 2018 name; use Jem.GetMallctl<long>(name), or the typed key in MallctlKeys.")]
    public static long GetMallCtlInt64(string name) => GetMallctl<long>(name);

    /// <summary>Writes the mallctl key <paramref name="name"/> of type C <c>int64_t</c> (8 bytes); same as <see cref="SetMallctl{T}(string, T)"/>.</summary>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty.</exception>
    /// <exception cref="MallctlException">The key does not exist, is read-only, its type is not C <c>int64_t</c> (8 bytes), or the value is not allowed.</exception>
    [Obsolete("The 2018 name; use Jem.SetMallctl(name, value), or the typed key in MallctlKeys.")]
    public static void SetMallCtlInt64(string name, long value) => SetMallctl(name, value);

    /// <summary>Reads the mallctl key <paramref name="name"/> of type C <c>uint64_t</c> (8 bytes); same as <see cref="GetMallctl{T}(string)"/>.</summary>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty.</exception>
    /// <exception cref="MallctlException">The key does not exist or its type is not C <c>uint64_t</c> (8 bytes).</exception>
    [Obsolete("The 2018 name; use Jem.GetMallctl<ulong>(name), or the typed key in MallctlKeys.")]
    public static ulong GetMallCtlUInt64(string name) => GetMallctl<ulong>(name);

    /// <summary>Writes the mallctl key <paramref name="name"/> of type C <c>uint64_t</c> (8 bytes); same as <see cref="SetMallctl{T}(string, T)"/>.</summary>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty.</exception>
    /// <exception cref="MallctlException">The key does not exist, is read-only, its type is not C <c>uint64_t</c> (8 bytes), or the value is not allowed.</exception>
    [Obsolete("The 2018 name; use Jem.SetMallctl(name, value), or the typed key in MallctlKeys.")]
    public static void SetMallCtlUInt64(string name, ulong value) => SetMallctl(name, value);

    /// <summary>Reads the mallctl key <paramref name="name"/> of type C <c>bool</c> (1 byte); same as <see cref="GetMallctl{T}(string)"/>.</summary>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty.</exception>
    /// <exception cref="MallctlException">The key does not exist or its type is not C <c>bool</c> (1 byte).</exception>
    [Obsolete("The 2018 name; use Jem.GetMallctl<bool>(name), or the typed key in MallctlKeys.")]
    public static bool GetMallCtlBool(string name) => GetMallctl<bool>(name);

    /// <summary>Writes the mallctl key <paramref name="name"/> of type C <c>bool</c> (1 byte); same as <see cref="SetMallctl{T}(string, T)"/>.</summary>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty.</exception>
    /// <exception cref="MallctlException">The key does not exist, is read-only, its type is not C <c>bool</c> (1 byte), or the value is not allowed.</exception>
    [Obsolete("The 2018 name; use Jem.SetMallctl(name, value), or the typed key in MallctlKeys.")]
    public static void SetMallCtlBool(string name, bool value) => SetMallctl(name, value);

    /// <summary>Reads the mallctl key <paramref name="name"/> of type C <c>size_t</c>; same as <see cref="GetMallctl{T}(string)"/>.</summary>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty.</exception>
    /// <exception cref="MallctlException">The key does not exist or its type is not C <c>size_t</c>.</exception>
    [Obsolete("The 2018 name; use Jem.GetMallctl<nuint>(name), or the typed key in MallctlKeys.")]
    public static nuint GetMallCtlSizeT(string name) => GetMallctl<nuint>(name);

    /// <summary>Writes the mallctl key <paramref name="name"/> of type C <c>size_t</c>; same as <see cref="SetMallctl{T}(string, T)"/>.</summary>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty.</exception>
    /// <exception cref="MallctlException">The key does not exist, is read-only, its type is not C <c>size_t</c>, or the value is not allowed.</exception>
    [Obsolete("The 2018 name; use Jem.SetMallctl(name, value), or the typed key in MallctlKeys.")]
    public static void SetMallCtlSizeT(string name, nuint value) => SetMallctl(name, value);

    /// <summary>Reads the mallctl key <paramref name="name"/> of type C <c>ssize_t</c>; same as <see cref="GetMallctl{T}(string)"/>.</summary>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty.</exception>
    /// <exception cref="MallctlException">The key does not exist or its type is not C <c>ssize_t</c>.</exception>
    [Obsolete("The 2018 name; use Jem.GetMallctl<nint>(name), or the typed key in MallctlKeys.")]
    public static nint GetMallCtlSSizeT(string name) => GetMallctl<nint>(name);

    /// <summary>Writes the mallctl key <paramref name="name"/> of type C <c>ssize_t</c>; same as <see cref="SetMallctl{T}(string, T)"/>.</summary>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty.</exception>
    /// <exception cref="MallctlException">The key does not exist, is read-only, its type is not C <c>ssize_t</c>, or the value is not allowed.</exception>
    [Obsolete("The 2018 name; use Jem.SetMallctl(name, value), or the typed key in MallctlKeys.")]
    public static void SetMallCtlSSizeT(string name, nint value) => SetMallctl(name, value);

    /// <summary>Reads a mallctl key of type <c>const char*</c>; same as <see cref="GetMallctlString(string)"/>.</summary>
    /// <returns>The string, or <see langword="null"/> where jemalloc holds a null pointer.</returns>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty.</exception>
    /// <exception cref="MallctlException">The key does not exist or is not a string key.</exception>
    [Obsolete("The 2018 name; use Jem.GetMallctlString(name), or the typed key in MallctlKeys.")]
    public static string? GetMallCtlString(string name) => GetMallctlString(name);

    /// <summary>Writes a mallctl key of type <c>const char*</c>; same as <see cref="SetMallctlString(string, string)"/>.</summary>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty.</exception>
    /// <exception cref="ArgumentNullException"><paramref name="value"/> is null.</exception>
    /// <exception cref="MallctlException">The key does not exist, is read-only or is not a string key.</exception>
    [Obsolete("The 2018 name; use Jem.SetMallctlString(name, value), or the typed key in MallctlKeys.")]
    public static void SetMallCtlString(string name, string value) => SetMallctlString(name, value);
}
