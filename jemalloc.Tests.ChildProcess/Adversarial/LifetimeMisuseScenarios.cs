namespace jemalloc.Tests.ChildProcess.Adversarial;

/// <summary>
/// Lifetime misuse on one thread: double free, over-release, free while acquired or leased, lease
/// copies disposed twice, default leases, leases used after Dispose, two parties sharing a structure.
/// Each misuse throws the documented exception and leaves the structure usable.
/// </summary>
internal static class LifetimeMisuseScenarios
{
    internal static void Register(Dictionary<string, Action> all)
    {
        all["misuse-double-free"] = DoubleFree;
        all["misuse-over-release"] = OverRelease;
        all["misuse-free-while-acquired"] = FreeWhileAcquired;
        all["misuse-free-while-leased"] = FreeWhileLeased;
        all["misuse-lease-copies"] = LeaseCopies;
        all["misuse-default-values"] = DefaultValues;
        all["misuse-two-parties"] = TwoParties;
        all["misuse-count-limits"] = CountLimits;
        all["misuse-reset-while-in-use"] = ResetWhileInUse;
    }

    private static void DoubleFree()
    {
        var buffer = new FixedBuffer<long>(8);
        FixedBuffer<long> copy = buffer;
        buffer.Free();
        Check.ThrowsExactly<ObjectDisposedException>("FixedBuffer second Free", buffer.Free);
        Check.ThrowsExactly<ObjectDisposedException>("FixedBuffer Free through a copy", copy.Free);

        var text = new FixedUtf8String("twice");
        FixedUtf8String textCopy = text;
        text.Free();
        Check.ThrowsExactly<ObjectDisposedException>("FixedUtf8String second Free", textCopy.Free);

        var array = new SafeArray<long>(8);
        array.Dispose();
        Check.NoThrow("SafeArray second Dispose", array.Dispose);
        var huge = new HugeArray<long>(8);
        huge.Dispose();
        Check.NoThrow("HugeArray second Dispose", huge.Dispose);

        // A second free must never free someone else's memory: a buffer that took the freed memory
        // (or slot) survives the stale copy's Free.
        var next = new FixedBuffer<long>(8);
        next.Fill(42);
        Check.ThrowsExactly<ObjectDisposedException>("stale Free after reuse", copy.Free);
        Check.True(next.IsValid && next.VectorSum() == 42 * 8, "reused buffer survives a stale Free");
        next.Free();
    }

    private static void OverRelease()
    {
        var buffer = new FixedBuffer<int>(4);
        Check.ThrowsExactly<InvalidOperationException>("Release never acquired", buffer.Release);
        buffer.Acquire();
        buffer.Acquire();
        buffer.Release();
        buffer.Release();
        Check.ThrowsExactly<InvalidOperationException>("third Release of two Acquires", buffer.Release);
        Check.Equal(0, buffer.AcquireCount, "AcquireCount after over-release");
        buffer[0] = 5;
        Check.Equal(5, buffer[0], "usable after over-release");
        Check.NoThrow("Free after over-release", buffer.Free);

        var array = new SafeArray<int>(4);
        Check.ThrowsExactly<InvalidOperationException>("SafeArray Release never acquired", array.Release);
        Check.NoThrow("SafeArray Dispose after over-release", array.Dispose);

        var text = new FixedUtf8String("x");
        Check.ThrowsExactly<InvalidOperationException>("FixedUtf8String Release never acquired", text.Release);
        text.Free();
    }

    private static void FreeWhileAcquired()
    {
        var buffer = new FixedBuffer<int>(4);
        buffer.Fill(9);
        buffer.Acquire();
        Check.ThrowsExactly<InvalidOperationException>("Free while acquired", buffer.Free);
        StaleCopyScenarios.OnThreads(2, t => Check.ThrowsExactly<InvalidOperationException>($"Free while acquired, thread {t}", buffer.Free));
        Check.True(buffer.IsValid && buffer.VectorSum() == 36, "intact after refused Free");
        buffer.Release();
        Check.NoThrow("Free after Release", buffer.Free);

        var array = new SafeArray<int>(4);
        array.Fill(9);
        array.Acquire();
        Check.ThrowsExactly<InvalidOperationException>("SafeArray Dispose while acquired", array.Dispose);
        Check.True(array.IsValid && !array.IsClosed && array[3] == 9, "SafeArray intact after refused Dispose");
        array.Release();
        Check.NoThrow("SafeArray Dispose after Release", array.Dispose);
        Check.True(!array.IsValid, "SafeArray invalid after Dispose");

        var text = new FixedUtf8String("held");
        text.Acquire();
        Check.ThrowsExactly<InvalidOperationException>("FixedUtf8String Free while acquired", text.Free);
        Check.Equal("held", text.ToString(), "string intact");
        text.Release();
        text.Free();
    }

    private static void FreeWhileLeased()
    {
        var buffer = new FixedBuffer<int>(4);
        using (MemoryLease<int> lease = buffer.Lease())
        {
            lease.Span.Fill(3);
            Check.ThrowsExactly<InvalidOperationException>("FixedBuffer Free while leased", buffer.Free);
            StaleCopyScenarios.OnThreads(2, t => Check.ThrowsExactly<InvalidOperationException>($"Free while leased, thread {t}", buffer.Free));
            Check.Equal(3, lease[3], "lease usable after refused Free");
            Check.True(lease.IsOpen, "lease still open");
        }

        Check.NoThrow("Free after the lease", buffer.Free);

        var array = new HugeArray<int>(1000);
        using (MemoryLease<int> lease = array.Lease())
        {
            Check.ThrowsExactly<InvalidOperationException>("HugeArray Dispose while leased", array.Dispose);
            lease.Span.Fill(2);
        }

        Check.Equal(2000, array.VectorSum(), "HugeArray intact");
        array.Dispose();

        var text = new FixedUtf8String("leased");
        using (ReadOnlyMemoryLease<byte> lease = text.Lease())
        {
            Check.ThrowsExactly<InvalidOperationException>("FixedUtf8String Free while leased", text.Free);
            Check.Equal(6, lease.Span.Length, "string lease length");
        }

        text.Free();
    }

    private static void LeaseCopies()
    {
        var buffer = new FixedBuffer<int>(4);
        MemoryLease<int> first = buffer.Lease();
        MemoryLease<int> copy = first;
        MemoryLease<int> second = buffer.Lease();
        Check.Equal(2, buffer.Handle.LeaseCount, "two leases open");
        first.Dispose();
        copy.Dispose();
        first.Dispose();
        Check.Equal(1, buffer.Handle.LeaseCount, "a lease disposed three times through copies closes once");
        Check.True(!first.IsOpen && !copy.IsOpen, "disposed lease and its copy report closed");
        Check.True(second.IsOpen, "the other holder's lease is still open");
        Check.ThrowsExactly<InvalidOperationException>("Free under the other holder's lease", buffer.Free);

        // Using a disposed lease throws (whichever copy).
        Exception? caught = null;
        try { _ = copy.Span.Length; } catch (Exception e) { caught = e; }
        Check.Caught<ObjectDisposedException>("disposed lease .Span", caught);
        caught = null;
        try { _ = copy[0]; } catch (Exception e) { caught = e; }
        Check.Caught<ObjectDisposedException>("disposed lease [0]", caught);
        caught = null;
        try { _ = first.Pointer; } catch (Exception e) { caught = e; }
        Check.Caught<ObjectDisposedException>("disposed lease .Pointer", caught);
        caught = null;
        try { _ = first.AsSpan(0, 1).Length; } catch (Exception e) { caught = e; }
        Check.Caught<ObjectDisposedException>("disposed lease AsSpan", caught);
        caught = null;
        try { _ = LeaseChunks(first); } catch (Exception e) { caught = e; }
        Check.Caught<ObjectDisposedException>("disposed lease GetChunks", caught);

        second.Dispose();
        Check.Equal(0, buffer.Handle.LeaseCount, "no lease left");
        // A stale lease copy disposed after the buffer is freed and its slot reused must not close
        // the new owner's lease.
        buffer.Free();
        var next = new FixedBuffer<int>(4);
        MemoryLease<int> nextLease = next.Lease();
        copy.Dispose();
        second.Dispose();
        Check.Equal(1, next.Handle.LeaseCount, "stale lease copies never close another buffer's lease");
        Check.ThrowsExactly<InvalidOperationException>("Free under a lease after stale disposals", next.Free);
        nextLease.Dispose();
        next.Free();

        var array = new SafeArray<int>(4);
        MemoryLease<int> arrayLease = array.Lease();
        MemoryLease<int> arrayCopy = arrayLease;
        arrayLease.Dispose();
        arrayCopy.Dispose();
        Check.Equal(0, array.Handle.LeaseCount, "SafeArray lease copies close once");
        Check.NoThrow("SafeArray Dispose after the lease", array.Dispose);
        arrayCopy.Dispose();

        // Release() never closes a lease.
        var held = new FixedBuffer<int>(4);
        MemoryLease<int> heldLease = held.Lease();
        Check.ThrowsExactly<InvalidOperationException>("Release while only leased", held.Release);
        Check.Equal(1, held.Handle.LeaseCount, "Release left the lease");
        heldLease.Dispose();
        held.Free();
    }

    private static int LeaseSpanLength(MemoryLease<int> lease) => lease.Span.Length;

    private static int LeaseElement(MemoryLease<int> lease, long index) => lease[index];

    private static int LeaseChunks(MemoryLease<int> lease)
    {
        int n = 0;
        foreach (Span<int> chunk in lease.GetChunks())
        {
            n += chunk.Length;
        }

        return n;
    }

    private static void DefaultValues()
    {
        MemoryLease<int> lease = default;
        Check.True(!lease.IsOpen, "default lease not open");
        Check.Equal(0L, lease.Length, "default lease length");
        Check.NoThrow("default lease Dispose twice", () => { MemoryLease<int> l = default; l.Dispose(); l.Dispose(); });
        Check.Throws<Exception>("default lease [0]", () => _ = LeaseElement(default, 0));
        Check.NoThrow("default lease Span is empty", () => Check.Equal(0, LeaseSpanLength(default), "default lease span length"));
        ReadOnlyMemoryLease<byte> readOnly = default;
        Check.True(!readOnly.IsOpen, "default read-only lease not open");
        Check.NoThrow("default read-only lease Dispose", () => { ReadOnlyMemoryLease<byte> l = default; l.Dispose(); l.Dispose(); });

        FixedBuffer<int> none = default;
        Check.Equal(0, none.Length, "default FixedBuffer Length");
        Check.True(!none.IsValid, "default FixedBuffer not valid");
        Check.Throws<IndexOutOfRangeException>("default FixedBuffer [0]", () => _ = none[0]);
        Check.ThrowsExactly<ObjectDisposedException>("default FixedBuffer Lease", () => { using MemoryLease<int> l = none.Lease(); });
        Check.ThrowsExactly<ObjectDisposedException>("default FixedBuffer Free", none.Free);
        Check.ThrowsExactly<ObjectDisposedException>("default FixedBuffer Acquire", none.Acquire);
        Check.ThrowsExactly<ObjectDisposedException>("default FixedBuffer Fill", () => none.Fill(1));
        Check.ThrowsExactly<ObjectDisposedException>("default FixedBuffer VectorSum", () => none.VectorSum());
        Check.NoThrow("default FixedBuffer foreach", () => { foreach (int _ in none) { } });

        FixedUtf8String empty = default;
        Check.Equal(0, empty.Length, "default FixedUtf8String Length");
        Check.Equal(string.Empty, empty.ToString(), "default FixedUtf8String ToString");
        Check.ThrowsExactly<ObjectDisposedException>("default FixedUtf8String Free", empty.Free);
        Check.ThrowsExactly<ObjectDisposedException>("default FixedUtf8String Acquire", empty.Acquire);
        Check.ThrowsExactly<ObjectDisposedException>("default FixedUtf8String Pointer", () => _ = empty.Pointer);
        Check.NoThrow("default FixedUtf8String Lease", () => { using ReadOnlyMemoryLease<byte> l = empty.Lease(); Check.True(!l.IsOpen, "default string lease not open"); });

        AllocationHandle handle = default;
        Check.True(!handle.IsValid && handle.AcquireCount == -1 && handle.LeaseCount == -1, "default AllocationHandle is invalid");
    }

    private static void TwoParties()
    {
        // Leases are per holder: B's extra disposals and Releases never cancel A's lease.
        var buffer = new FixedBuffer<int>(4);
        MemoryLease<int> a = buffer.Lease();
        MemoryLease<int> b = buffer.Lease();
        b.Dispose();
        b.Dispose();
        Check.ThrowsExactly<InvalidOperationException>("B's Release with no Acquire", buffer.Release);
        Check.ThrowsExactly<InvalidOperationException>("Free while A holds a lease", buffer.Free);
        Check.True(a.IsOpen, "A's lease open");
        a.Dispose();
        buffer.Free();

        // Acquire/Release is one shared count (the 2018 API): report what it gives.
        var shared = new FixedBuffer<int>(4);
        shared.Acquire(); // party A
        shared.Acquire(); // party B
        shared.Release(); // B
        shared.Release(); // B again, by mistake
        try
        {
            shared.Free();
            Check.Info("INFO Acquire/Release is one shared count: B's second Release cancelled A's Acquire and Free succeeded under A (documented: use Lease() per holder)");
        }
        catch (InvalidOperationException e)
        {
            Check.Info($"INFO Acquire/Release per party: Free refused ({e.Message})");
            shared.Release();
            shared.Free();
        }
    }

    private static void CountLimits()
    {
        var buffer = new FixedBuffer<int>(1);
        int acquired = 0;
        try
        {
            for (; acquired < 40_000; acquired++)
            {
                buffer.Acquire();
            }

            Check.Fail("Acquire limit", "40,000 Acquire calls all succeeded; the count must refuse rather than overflow into the lease bits");
        }
        catch (InvalidOperationException e) when (e is not ObjectDisposedException)
        {
            Check.Equal(acquired, buffer.AcquireCount, "AcquireCount at the limit");
            Check.Equal(0, buffer.Handle.LeaseCount, "no lease counted by Acquire overflow");
        }

        for (int i = 0; i < acquired; i++)
        {
            buffer.Release();
        }

        Check.ThrowsExactly<InvalidOperationException>("Release past zero after the limit", buffer.Release);

        // Leases: many open at once, then the limit refuses cleanly.
        var leases = new List<int>();
        int opened = 0;
        try
        {
            for (; opened < 40_000; opened++)
            {
                OpenAndForget(buffer);
            }

            Check.Fail("Lease limit", "40,000 leases all opened; the count must refuse rather than overflow");
        }
        catch (InvalidOperationException e) when (e is not ObjectDisposedException)
        {
            Check.Equal(opened, buffer.Handle.LeaseCount, "LeaseCount at the limit");
            Check.Equal(0, buffer.AcquireCount, "no acquisition counted by lease overflow");
        }

        Check.ThrowsExactly<InvalidOperationException>("Free while at the lease limit", buffer.Free);
        Check.True(buffer.IsValid, "still valid at the limit");
        _ = leases;
    }

    // A lease opened and never disposed (the holder forgot it): it keeps the buffer.
    private static void OpenAndForget(FixedBuffer<int> buffer) => _ = buffer.Lease();

    private static void ResetWhileInUse()
    {
        using var arena = new JemArena();
        FixedBuffer<int> buffer = arena.CreateBuffer<int>(4);
        SafeArray<int> array = arena.CreateArray<int>(4);
        buffer.Fill(1);
        array.Fill(2);

        buffer.Acquire();
        Check.ThrowsExactly<InvalidOperationException>("Reset while a buffer is acquired", arena.Reset);
        Check.True(buffer.IsValid && array.IsValid && buffer[0] == 1 && array[0] == 2, "nothing reset by a refused Reset");
        buffer.Release();

        using (MemoryLease<int> lease = array.Lease())
        {
            Check.ThrowsExactly<InvalidOperationException>("Reset while an array is leased", arena.Reset);
            Check.Equal(2, lease[3], "lease intact after refused Reset");
        }

        Check.True(buffer.IsValid && array.IsValid, "valid after refused resets");
        Check.NoThrow("Reset once released", arena.Reset);
        Check.True(!buffer.IsValid && !array.IsValid, "invalid after Reset");
        Check.NoThrow("Dispose an array the reset invalidated", array.Dispose);
    }
}
