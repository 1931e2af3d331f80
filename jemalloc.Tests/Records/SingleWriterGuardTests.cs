using jemalloc.Internal;

namespace jemalloc.Tests.Records;

public class SingleWriterGuardTests
{
    [Fact]
    public void A_second_writer_is_refused_until_the_first_leaves()
    {
        var owner = new Owner();
        var guard = default(SingleWriterGuard);
        guard.Enter(owner, "Thing");
        Assert.True(guard.IsHeld);
        InvalidOperationException e = Assert.Throws<InvalidOperationException>(() => EnterCopy(ref guard, owner));
        Assert.Contains("Thing", e.Message, StringComparison.Ordinal);
        Assert.Contains("one writer", e.Message, StringComparison.Ordinal);
        guard.Exit();
        Assert.False(guard.IsHeld);
        guard.Enter(owner, "Thing");
        Assert.True(guard.IsHeld);
    }

    [Fact]
    public void The_refusal_says_what_holds_the_owner_as_the_caller_told_it()
    {
        var owner = new Owner();
        var guard = default(SingleWriterGuard);
        guard.Enter(owner, "Thing");
        InvalidOperationException plain = Assert.Throws<InvalidOperationException>(() => EnterCopy(ref guard, owner));
        Assert.Contains("one writer: a write.", plain.Message, StringComparison.Ordinal);
        Assert.DoesNotContain("NativeMemoryStream", plain.Message, StringComparison.Ordinal);

        var told = guard;
        InvalidOperationException e = Assert.Throws<InvalidOperationException>(() => told.Enter(owner, "Thing", "a write, or a reading pass"));
        Assert.Contains("one writer: a write, or a reading pass.", e.Message, StringComparison.Ordinal);
        guard.Exit();
    }

    [Fact]
    public void A_disposed_owner_refuses_a_writer_and_leaves_the_guard_free()
    {
        var owner = new Owner { IsDisposed = true };
        var guard = default(SingleWriterGuard);
        ObjectDisposedException e = Assert.Throws<ObjectDisposedException>(() => EnterCopy(ref guard, owner));
        Assert.Contains("Thing", e.ObjectName, StringComparison.Ordinal);
        Assert.StartsWith("This Thing has been disposed.", e.Message, StringComparison.Ordinal);
        Assert.DoesNotContain("freed", e.Message, StringComparison.Ordinal);
        Assert.False(guard.IsHeld);
    }

    [Fact]
    public void The_index_and_the_store_share_the_guard()
    {
        // One job in one place: both record types keep their one-writer rule in this type.
        Assert.Equal(typeof(SingleWriterGuard), typeof(NativeHashIndex<long>).GetField("_writer", System.Reflection.BindingFlags.NonPublic | System.Reflection.BindingFlags.Instance)!.FieldType);
        Assert.Equal(typeof(SingleWriterGuard), typeof(Utf8StringStore).GetField("_writer", System.Reflection.BindingFlags.NonPublic | System.Reflection.BindingFlags.Instance)!.FieldType);
    }

    private static void EnterCopy(ref SingleWriterGuard guard, Owner owner) => guard.Enter(owner, "Thing");

    private sealed class Owner : IWriterGuarded
    {
        public bool IsDisposed { get; set; }
    }
}
