using jemalloc.Tests.Support;

namespace jemalloc.Tests.Ledger;

/// <summary>
/// <see cref="MemoryLease{T}"/> used after its <c>Dispose</c>: each member, and a chunk enumerator taken
/// before the dispose, throws <see cref="ObjectDisposedException"/> saying the lease ended (it names the
/// element type), not that memory was freed: the structure under it is live and usable.
/// </summary>
[Collection(LeakChecked.Name)]
public sealed class MemoryLeaseTests : LeakCheckedTest
{
    [Fact]
    public void Every_member_of_a_lease_used_after_Dispose_says_the_lease_ended()
    {
        using var array = new SafeArray<double>(8, 1.5);
        MemoryLease<double> lease = array.Lease();
        MemoryLease<double> copy = lease;
        copy.Dispose();
        Assert.False(lease.IsOpen);

        SaysLeaseEnded(Catch(lease, static l => _ = l.Span.Length));
        SaysLeaseEnded(Catch(lease, static l => _ = l.Pointer));
        SaysLeaseEnded(Catch(lease, static l => _ = l[0]));
        SaysLeaseEnded(Catch(lease, static l => _ = l.AsSpan(0, 1).Length));
        SaysLeaseEnded(Catch(lease, static l => _ = l.GetChunks()));
        SaysLeaseEnded(Catch(copy, static l => _ = l.Span.Length));

        // Nothing was freed: the array is live, and a new lease reads it.
        Assert.True(array.IsValid);
        using MemoryLease<double> again = array.Lease();
        Assert.Equal(1.5, again[7]);
    }

    [Fact]
    public void A_chunk_enumerator_taken_before_the_lease_s_Dispose_says_the_lease_ended()
    {
        using var array = new HugeArray<int>(100);
        MemoryLease<int> lease = array.Lease();
        MemoryLease<int>.ChunkEnumerator chunks = lease.GetChunks(30);
        Assert.True(chunks.MoveNext());
        lease.Dispose();

        ObjectDisposedException? error = null;
        try
        {
            chunks.MoveNext();
        }
        catch (ObjectDisposedException e)
        {
            error = e;
        }

        DisposedMessages.SaysEnded(error, "MemoryLease", "The MemoryLease<Int32> this chunk enumerator walks");
        Assert.Contains("take a new lease", error!.Message, StringComparison.Ordinal);
        Assert.True(array.IsValid);
    }

    [Fact]
    public void A_default_lease_throws_nothing_it_is_empty()
    {
        MemoryLease<long> empty = default;
        Assert.False(empty.IsOpen);
        Assert.Equal(0, empty.Span.Length);
        Assert.Equal(0, empty.Pointer);
        empty.Dispose();
    }

    private static void SaysLeaseEnded(ObjectDisposedException? e)
    {
        DisposedMessages.SaysEnded(e, "MemoryLease", "This MemoryLease<Double>");
        Assert.EndsWith("take a new lease.", e!.Message.Split('\n')[0].TrimEnd(), StringComparison.Ordinal);
    }

    // A ref struct cannot be captured by a lambda: it is passed in, and the exception caught here.
    private static ObjectDisposedException? Catch<T>(MemoryLease<T> lease, LeaseUse<T> use)
        where T : unmanaged
    {
        try
        {
            use(lease);
        }
        catch (ObjectDisposedException e)
        {
            return e;
        }

        return null;
    }

    private delegate void LeaseUse<T>(MemoryLease<T> lease)
        where T : unmanaged;
}
