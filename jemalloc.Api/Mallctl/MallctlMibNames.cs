using jemalloc.Interop;

namespace jemalloc.Mallctl;

/// <summary>
/// Names a raw MIB again, for the keys the library protects, so that <see cref="Jem.MallctlByMib"/>
/// cannot do what the same call by name is refused: the MIBs of those keys are looked up once, with
/// index components left open.
/// </summary>
internal static unsafe class MallctlMibNames
{
    private static readonly Lazy<Template[]> Templates = new(Build);

    /// <summary>The name <paramref name="mib"/> stands for if it is a protected key, else <see langword="null"/>.</summary>
    internal static string? NameOf(ReadOnlySpan<nuint> mib)
    {
        foreach (Template template in Templates.Value)
        {
            if (template.Matches(mib))
            {
                return template.NameFor(mib);
            }
        }

        return null;
    }

    private static Template[] Build()
    {
        var patterns = new List<string>
        {
            "thread.arena", "tcache.create", "tcache.flush", "tcache.destroy", "arenas.create",
            "experimental.arenas_create_ext", "experimental.batch_alloc",
        };
        patterns.AddRange(MallctlCatalog.All.Select(entry => entry.Key).Where(pattern => pattern.StartsWith("arena.{i}.", StringComparison.Ordinal)));
        var templates = new List<Template>();
        Span<nuint> mib = stackalloc nuint[8];
        foreach (string pattern in patterns)
        {
            string[] parts = pattern.Split('.');
            string name = string.Join('.', parts.Select(part => part == "{i}" ? "0" : part));
            nuint length = (nuint)mib.Length;
            byte[] utf8 = System.Text.Encoding.UTF8.GetBytes(name + "\0");
            int result;
            fixed (byte* namePointer = utf8)
            fixed (nuint* mibPointer = mib)
            {
                result = JemNative.MallctlNameToMib(namePointer, mibPointer, &length);
            }

            if (result == 0)
            {
                templates.Add(new Template(parts, mib[..(int)length].ToArray()));
            }
        }

        return [.. templates];
    }

    private sealed class Template(string[] parts, nuint[] mib)
    {
        internal bool Matches(ReadOnlySpan<nuint> candidate)
        {
            if (candidate.Length != mib.Length)
            {
                return false;
            }

            for (int i = 0; i < mib.Length; i++)
            {
                if (parts[i] != "{i}" && candidate[i] != mib[i])
                {
                    return false;
                }
            }

            return true;
        }

        internal string NameFor(ReadOnlySpan<nuint> candidate)
        {
            string[] named = (string[])parts.Clone();
            for (int i = 0; i < named.Length; i++)
            {
                if (named[i] == "{i}")
                {
                    named[i] = candidate[i].ToString(System.Globalization.CultureInfo.InvariantCulture);
                }
            }

            return string.Join('.', named);
        }
    }
}
