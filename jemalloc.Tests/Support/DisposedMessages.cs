namespace jemalloc.Tests.Support;

/// <summary>
/// The three common things an <see cref="ObjectDisposedException"/> of the library reports, each checked
/// by its words: an object that was disposed, a lease or scope that ended, and memory that was freed
/// (the rarer ones, a default value or memory gone with an arena, are checked where they happen).
/// Only the freed kind may say "freed": a lease that ends frees nothing, and a message that says it
/// did sends the reader looking for the wrong bug.
/// </summary>
internal static class DisposedMessages
{
    /// <summary>Asserts that <paramref name="act"/> reports <paramref name="typeName"/> as disposed.</summary>
    public static ObjectDisposedException AssertDisposed(string typeName, Action act) =>
        SaysDisposed(Assert.Throws<ObjectDisposedException>(act), typeName);

    /// <inheritdoc cref="AssertDisposed(string, Action)"/>
    public static ObjectDisposedException AssertDisposed(string typeName, Func<object?> act) =>
        SaysDisposed(Assert.Throws<ObjectDisposedException>(act), typeName);

    /// <summary>Asserts that <paramref name="e"/> names <paramref name="typeName"/> and says it was disposed, not freed.</summary>
    public static ObjectDisposedException SaysDisposed(ObjectDisposedException e, string typeName)
    {
        Assert.Equal(typeName, e.ObjectName);
        Assert.StartsWith($"This {typeName} has been disposed.", e.Message, StringComparison.Ordinal);
        Assert.DoesNotContain("freed", e.Message, StringComparison.OrdinalIgnoreCase);
        return e;
    }

    /// <summary>
    /// Asserts that <paramref name="e"/> (a lease or scope used after its Dispose) names
    /// <paramref name="objectName"/>, says <paramref name="shownName"/> ended, and says nothing was freed.
    /// </summary>
    public static ObjectDisposedException SaysEnded(ObjectDisposedException? e, string objectName, string shownName)
    {
        Assert.NotNull(e);
        Assert.Equal(objectName, e.ObjectName);
        Assert.Contains($"{shownName} has ended (it was disposed);", e.Message, StringComparison.Ordinal);
        Assert.DoesNotContain("freed", e.Message, StringComparison.OrdinalIgnoreCase);
        return e;
    }

    /// <summary>Asserts that <paramref name="act"/> reports that <paramref name="typeName"/>'s memory was freed.</summary>
    public static ObjectDisposedException AssertFreed(string typeName, Action act) =>
        SaysFreed(Assert.Throws<ObjectDisposedException>(act), typeName);

    /// <inheritdoc cref="AssertFreed(string, Action)"/>
    public static ObjectDisposedException AssertFreed(string typeName, Func<object?> act) =>
        SaysFreed(Assert.Throws<ObjectDisposedException>(act), typeName);

    /// <summary>Asserts that <paramref name="e"/> names <paramref name="typeName"/> and says its memory was freed.</summary>
    public static ObjectDisposedException SaysFreed(ObjectDisposedException e, string typeName)
    {
        Assert.Equal(typeName, e.ObjectName);
        Assert.StartsWith($"This {typeName} has been freed", e.Message, StringComparison.Ordinal);
        return e;
    }
}
