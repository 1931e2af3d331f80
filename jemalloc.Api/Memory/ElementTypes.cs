namespace jemalloc.Memory;

/// <summary>
/// Numbers for the element types of structures, so a ledger slot records its element type in four
/// bytes instead of holding a <see cref="Type"/> reference.
/// </summary>
internal static class ElementTypes
{
    private static readonly Lock Gate = new();
    private static Type[] s_types = [typeof(void)];

    /// <summary>The number of <typeparamref name="T"/>; the first call per type takes a lock, later ones read a static.</summary>
    internal static int IdOf<T>() => Cache<T>.Id;

    /// <summary>The type numbered <paramref name="id"/>, or <see langword="null"/> for 0.</summary>
    internal static Type? TypeOf(int id)
    {
        Type[] types = Volatile.Read(ref s_types);
        return id > 0 && id < types.Length ? types[id] : null;
    }

    private static int Register(Type type)
    {
        lock (Gate)
        {
            int index = Array.IndexOf(s_types, type);
            if (index > 0)
            {
                return index;
            }

            Type[] grown = [.. s_types, type];
            Volatile.Write(ref s_types, grown);
            return grown.Length - 1;
        }
    }

    private static class Cache<T>
    {
        internal static readonly int Id = Register(typeof(T));
    }
}
