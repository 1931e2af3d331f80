using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;

namespace jemalloc.Mallctl;

/// <summary>
/// What every public mallctl entry point may do with a key, decided in one place from
/// <see cref="MallctlCatalog"/>:
/// <list type="bullet">
/// <item>typed values: the .NET type must match the key's C type (same kind and size);</item>
/// <item>commands (<c>arena.&lt;i&gt;.purge</c>, <c>thread.tcache.flush</c>, ...): run only, never read or written;</item>
/// <item>pointer and struct keys (extent hooks, <c>experimental.*</c> hooks and queries, <c>thread.allocatedp</c>, ...): refused by the typed API;</item>
/// <item>guarded keys: <c>arenas.create</c> and <c>tcache.create</c> read only (jemalloc writes through a null length otherwise);
/// <c>tcache.flush</c>/<c>tcache.destroy</c> only for caches the user created through the library;
/// <c>thread.arena</c> never onto a <see cref="JemArena"/>'s arena; <c>arena.&lt;i&gt;.reset</c>/<c>destroy</c>
/// never on a <see cref="JemArena"/>'s arena, an arena with live structures, an arena a thread was moved onto, or all arenas at once;
/// <c>arena.4096.*</c>/<c>arena.4097.*</c> only where jemalloc supports "all"/"destroyed".</item>
/// </list>
/// The raw pointer-level calls (<see cref="Jem.Mallctl(string, void*, nuint*, void*, nuint)"/>,
/// <see cref="Jem.MallctlByMib"/>) apply only the guards that protect the library's own state.
/// </summary>
internal static class MallctlPolicy
{
    private const string RawAlternative = " The unsafe Jem.Mallctl(string, void*, nuint*, void*, nuint) overload passes pointers through, at the caller's risk.";

    private static LedgerHooks? s_ledger;
    private static Func<uint, bool>? s_belongsToJemArena;

    /// <summary>Checks a typed call on <paramref name="name"/>; <paramref name="newValue"/> is the value written, as a 4-byte unsigned where that is the key's type.</summary>
    /// <exception cref="MallctlException">The call is refused, or <paramref name="valueType"/> does not match the key's C type.</exception>
    internal static MallctlTarget CheckTyped(string name, MallctlOperation operation, Type? valueType, uint newValue = 0)
    {
        MallctlTarget target = MallctlTarget.Resolve(name);
        CheckShape(target, operation, valueType);
        CheckArenaIndex(target);
        CheckGuards(target, operation, newValue);
        return target;
    }

    /// <summary>
    /// Checks a raw call: the guards that protect the library's state, and a null length where
    /// jemalloc would write through it.
    /// </summary>
    /// <returns>0 to make the call; an error number to return without calling.</returns>
    /// <exception cref="MallctlException">The call is refused.</exception>
    internal static unsafe int CheckRaw(in MallctlTarget target, void* oldValue, nuint* oldLength, void* newValue, nuint newLength)
    {
        if (oldLength == null && IsVerifiedRead(target.Pattern))
        {
            return (int)MallctlError.InvalidValue; // jemalloc would store 0 through the null length.
        }

        CheckArenaIndex(target);
        MallctlOperation operation = oldValue != null || oldLength != null
            ? (newValue != null || newLength != 0 ? MallctlOperation.Exchange : MallctlOperation.Read)
            : (newValue != null || newLength != 0 ? MallctlOperation.Write : MallctlOperation.Command);
        uint written = newValue != null && newLength == sizeof(uint) ? *(uint*)newValue : uint.MaxValue;
        if (target.Pattern is "tcache.flush" or "tcache.destroy" && operation is MallctlOperation.Read or MallctlOperation.Command)
        {
            return 0; // jemalloc refuses these itself (EPERM/EINVAL) without touching a cache.
        }

        if (target.Pattern is "tcache.flush" or "tcache.destroy" or "thread.arena" && newValue != null && newLength != sizeof(uint))
        {
            return (int)MallctlError.InvalidValue;
        }

        if (target.Pattern == "thread.arena" && newValue == null)
        {
            return 0;
        }

        CheckGuards(target, operation is MallctlOperation.Read ? MallctlOperation.Read : operation, written, raw: true);
        return 0;
    }

    /// <summary>Throws the refusal of a call on <paramref name="key"/>.</summary>
    [DoesNotReturn, MethodImpl(MethodImplOptions.NoInlining)]
    internal static void ThrowRefused(string key, string reason) =>
        throw MallctlException.Refused(key, reason);

    private static void CheckShape(in MallctlTarget target, MallctlOperation operation, Type? valueType)
    {
        switch (target.Type)
        {
            case MallctlCType.Pointer:
                ThrowRefused(target.Name, $"It takes or returns a raw pointer, which the typed API does not pass. {PointerAlternative(target.Pattern)}");
                break;
            case MallctlCType.Struct:
                ThrowRefused(target.Name, "Its value is a C struct the typed API has no type for." + RawAlternative);
                break;
            case MallctlCType.Command:
                if (operation != MallctlOperation.Command)
                {
                    ThrowMismatch(target.Name, $"It is a command that takes and returns nothing: run it with Jem.MallctlCommand(\"{target.Name}\") or a MallctlCommand instead of accessing it as {valueType?.Name ?? "a value"}.");
                }

                break;
            case MallctlCType.Unknown:
                break; // jemalloc answers ENOENT, or checks the size of a plain statistic itself.
            default:
                if (operation == MallctlOperation.Command)
                {
                    // prof.reset and prof.log_start take an optional value; every other value key must be read or written.
                    if (target.Pattern is not ("prof.reset" or "prof.log_start"))
                    {
                        ThrowMismatch(target.Name, $"It is not a command; read or write it as {Expected(target.Type)}.");
                    }
                }
                else if (valueType is not null && !Matches(target.Type, valueType))
                {
                    ThrowMismatch(target.Name, valueType == typeof(string)
                        ? $"It is not a string (const char*) key: its C type is {CName(target.Type)}; access it as {Expected(target.Type)}."
                        : $"It was accessed as {Describe(valueType)}, but its C type is {CName(target.Type)}: access it as {Expected(target.Type)}.");
                }

                break;
        }
    }

    // arena.4096 (MALLCTL_ARENAS_ALL) and arena.4097 (MALLCTL_ARENAS_DESTROYED) reach jemalloc's
    // per-arena handlers, which index the arena table past its end for any key but these.
    // Other indices past the arenas are answered by jemalloc's own index check (ENOENT).
    private static void CheckArenaIndex(in MallctlTarget target)
    {
        if (target.Index is not (MallctlKeys.AllArenas or MallctlKeys.AllArenas + 1) || !target.Pattern.StartsWith("arena.{i}.", StringComparison.Ordinal))
        {
            return;
        }

        string leaf = target.Pattern["arena.{i}.".Length..];
        bool allowed = target.Index == MallctlKeys.AllArenas
            ? leaf is "initialized" or "decay" or "purge" or "dss"
            : target.Index == MallctlKeys.AllArenas + 1 && leaf == "initialized";
        if (!allowed)
        {
            string alternative = leaf switch
            {
                "reset" or "destroy" => "Reset or destroy each arena on its own: JemArena.Reset()/Dispose() for arenas made by a JemArena.",
                "dirty_decay_ms" or "muzzy_decay_ms" => "Use JemTuning.SetDecayForAllArenas.",
                _ => "Name one arena.",
            };
            ThrowRefused(target.Name, $"Arena index {target.Index} does not support '{leaf}'. {alternative}");
        }
    }

    private static void CheckGuards(in MallctlTarget target, MallctlOperation operation, uint newValue, bool raw = false)
    {
        switch (target.Pattern)
        {
            case "arenas.create":
                if (!raw && operation != MallctlOperation.Read)
                {
                    ThrowRefused(target.Name, "Read it to create an arena (MallctlKeys.Arenas.Create.Get()), or use new JemArena(); a written value would be taken as an extent_hooks pointer.");
                }

                break;
            case "tcache.create":
                if (!raw && operation != MallctlOperation.Read)
                {
                    ThrowRefused(target.Name, "Read it to create a thread cache (MallctlKeys.Tcache.Create.Get()).");
                }

                break;
            case "tcache.flush":
            case "tcache.destroy":
                if (operation != MallctlOperation.Write)
                {
                    ThrowRefused(target.Name, "Write the id of a thread cache from tcache.create (MallctlKeys.Tcache.Flush.Set(id)).");
                }

                if (!ThreadCacheRegistry.IsUser(newValue))
                {
                    ThrowRefused(target.Name, ThreadCacheRegistry.DescribeRefusal(newValue));
                }

                break;
            case "thread.arena":
                if (operation is MallctlOperation.Write or MallctlOperation.Exchange)
                {
                    if (ThreadArenaGuard.Refusal(newValue) is { } refusal)
                    {
                        ThrowRefused(target.Name, refusal);
                    }

                    ThreadArenaGuard.RecordMove(newValue);
                }

                break;
            case "arena.{i}.reset":
            case "arena.{i}.destroy":
                CheckArenaReset(target);
                break;
        }
    }

    private static void CheckArenaReset(in MallctlTarget target)
    {
        uint arena = target.Index;
        string verb = target.Pattern.EndsWith("reset", StringComparison.Ordinal) ? "reset" : "destroy";
        if (BelongsToJemArena(arena))
        {
            ThrowRefused(target.Name,
                $"Arena {arena} belongs to a JemArena (or is kept idle for the next one after a Dispose), which must {verb} it itself so that its structures are invalidated first: use JemArena.{(verb == "reset" ? "Reset()" : "Dispose()")}.");
        }

        if (ThreadArenaGuard.WasMovedOnto(arena))
        {
            ThrowRefused(target.Name,
                $"A thread was moved onto arena {arena} (thread.arena): its default allocations, which no flag ties to the arena, and its thread cache may hold memory the {verb} would free under them. Use a JemArena for memory you want to {verb}.");
        }

        LedgerHooks? ledger = Volatile.Read(ref s_ledger);
        if (ledger is not null && ledger.HasStructuresIn(arena))
        {
            ThrowRefused(target.Name,
                $"Structures (FixedBuffer, SafeArray, HugeArray, ...) allocated in arena {arena} are still live; the {verb} would free their memory under them. Dispose them first, or create the arena with a JemArena, whose Reset()/Dispose() invalidates them.");
        }

        // Checked mode holds freed blocks of the arena: they go now, or the quarantine would free them
        // after the reset a second time. No structure is left in the arena, so no free adds one meanwhile.
        ledger?.ReleaseArena(arena);
    }

    /// <summary>
    /// How the ledger, a later layer, answers for an arena: called once, as the ledger's slot table is
    /// created, so before any structure exists (until then no arena holds one, and checked mode holds nothing).
    /// </summary>
    /// <param name="hasStructuresIn">Whether a structure of the arena is live, or disposed and not yet freed.</param>
    /// <param name="releaseArena">Frees what checked mode holds of the arena, before a reset or destruction frees it all.</param>
    internal static void RegisterLedger(Func<uint, bool> hasStructuresIn, Action<uint> releaseArena) =>
        Volatile.Write(ref s_ledger, new LedgerHooks(hasStructuresIn, releaseArena));

    private sealed record LedgerHooks(Func<uint, bool> HasStructuresIn, Action<uint> ReleaseArena);

    /// <summary>
    /// How the arena books, a later layer, tell whether an arena belongs to a <see cref="JemArena"/>
    /// not yet destroyed: registered as the first arena account is recorded, so before any arena
    /// belongs to one (until then none does).
    /// </summary>
    internal static void RegisterArenaBooks(Func<uint, bool> belongsToJemArena) =>
        Volatile.Write(ref s_belongsToJemArena, belongsToJemArena);

    /// <summary>Whether <paramref name="arena"/> belongs to a <see cref="JemArena"/> not yet destroyed, which alone may reset or destroy it.</summary>
    internal static bool BelongsToJemArena(uint arena) =>
        Volatile.Read(ref s_belongsToJemArena) is { } belongs && belongs(arena);

    // tcache.create, arenas.create, experimental.arenas_create_ext and experimental.batch_alloc check
    // their output with VERIFY_READ, which stores 0 through the length pointer even when it is null.
    private static bool IsVerifiedRead(string pattern) =>
        pattern is "tcache.create" or "arenas.create" or "experimental.arenas_create_ext" or "experimental.batch_alloc";

    private static bool Matches(MallctlCType type, Type valueType) => type switch
    {
        MallctlCType.Bool => valueType == typeof(bool),
        MallctlCType.Unsigned or MallctlCType.UInt32 => valueType == typeof(uint) || valueType == typeof(int),
        MallctlCType.UInt64 or MallctlCType.Int64 => valueType == typeof(ulong) || valueType == typeof(long),
        MallctlCType.SizeT or MallctlCType.SSizeT => valueType == typeof(nuint) || valueType == typeof(nint) ||
            (IntPtr.Size == 8 && (valueType == typeof(ulong) || valueType == typeof(long))),
        MallctlCType.String => valueType == typeof(string),
        _ => false,
    };

    private static string Describe(Type type) =>
        type == typeof(string) ? "string" : $"{type.Name} ({(type == typeof(bool) ? 1 : type == typeof(int) || type == typeof(uint) ? 4 : 8)} bytes)";

    private static string CName(MallctlCType type) => type switch
    {
        MallctlCType.Bool => "bool (1 byte)",
        MallctlCType.Unsigned => "unsigned (4 bytes)",
        MallctlCType.UInt32 => "uint32_t (4 bytes)",
        MallctlCType.UInt64 => "uint64_t (8 bytes)",
        MallctlCType.Int64 => "int64_t (8 bytes)",
        MallctlCType.SizeT => $"size_t ({IntPtr.Size} bytes)",
        MallctlCType.SSizeT => $"ssize_t ({IntPtr.Size} bytes)",
        MallctlCType.String => "const char*",
        _ => type.ToString(),
    };

    private static string Expected(MallctlCType type) => type switch
    {
        MallctlCType.Bool => "bool",
        MallctlCType.Unsigned or MallctlCType.UInt32 => "uint",
        MallctlCType.UInt64 => "ulong",
        MallctlCType.Int64 => "long",
        MallctlCType.SizeT => "nuint",
        MallctlCType.SSizeT => "nint",
        MallctlCType.String => "string",
        _ => type.ToString(),
    };

    private static string PointerAlternative(string pattern) => pattern switch
    {
        "thread.allocatedp" => "Read thread.allocated (MallctlKeys.Thread.Allocated) instead.",
        "thread.deallocatedp" => "Read thread.deallocated (MallctlKeys.Thread.Deallocated) instead.",
        "arena.{i}.extent_hooks" => "Custom extent hooks are not supported by jemalloc.NET; use a JemArena for an arena of your own." + RawAlternative,
        "experimental.arenas_create_ext" => "Create an arena with new JemArena() or MallctlKeys.Arenas.Create.Get()." + RawAlternative,
        "experimental.batch_alloc" => "Allocate with Jem.Mallocx, or a structure with its constructor." + RawAlternative,
        _ => "It is not supported through the typed API." + RawAlternative,
    };

    [DoesNotReturn, MethodImpl(MethodImplOptions.NoInlining)]
    private static void ThrowMismatch(string key, string detail) =>
        throw new MallctlException(key, MallctlError.InvalidValue, detail);
}
