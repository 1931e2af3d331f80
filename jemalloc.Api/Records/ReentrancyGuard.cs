using jemalloc.Internal;

namespace jemalloc.Records;

/// <summary>
/// Which record structures the current thread is inside while they run user code (a key's
/// <c>Equals</c> or <c>GetHashCode</c>): a call back into one of them from that code is refused with
/// <see cref="InvalidOperationException"/> instead of waiting for a hold its own thread has, or
/// changing the structure under the operation that called out.
/// </summary>
internal static class ReentrancyGuard
{
    [ThreadStatic]
    private static object?[]? t_inside;

    [ThreadStatic]
    private static int t_depth;

    /// <summary>Records that this thread is inside <paramref name="owner"/>; pair with <see cref="Exit"/>.</summary>
    /// <exception cref="InvalidOperationException">This thread is already inside it.</exception>
    internal static void Enter(object owner, string typeName)
    {
        ThrowIfInside(owner, typeName);
        object?[] inside = t_inside ??= new object?[4];
        int depth = t_depth;
        if (depth == inside.Length)
        {
            Array.Resize(ref inside, depth * 2);
            t_inside = inside;
        }

        inside[depth] = owner;
        t_depth = depth + 1;
    }

    /// <summary>Leaves the structure entered last.</summary>
    internal static void Exit()
    {
        int depth = t_depth - 1;
        t_inside![depth] = null;
        t_depth = depth;
    }

    /// <summary>Throws if this thread is inside <paramref name="owner"/> (running user code it called).</summary>
    /// <exception cref="InvalidOperationException">This thread is inside it.</exception>
    internal static void ThrowIfInside(object owner, string typeName)
    {
        object?[]? inside = t_inside;
        for (int i = t_depth - 1; i >= 0; i--)
        {
            if (ReferenceEquals(inside![i], owner))
            {
                ThrowHelper.ThrowInvalidOperation($"This {typeName} was called from inside a key's Equals or GetHashCode that it is running (a reentrant call): refused, since the operation that called the key is not finished. Do not use the {typeName} from its keys' methods.");
            }
        }
    }
}
