using System.Buffers;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using Apache.Arrow;
using Apache.Arrow.C;
using Apache.Arrow.Types;
using jemalloc.Tests.Support;

namespace jemalloc.Arrow.Tests;

/// <summary>
/// The add-on's holds are its own: a view, a pin or an allocator block holds its structure so that no
/// user call (an extra <c>Release()</c>, <c>MemoryManager.Unpin()</c>, a second dispose of a pin's
/// handle, an arena reset) can free memory an Arrow array or a C consumer still reads.
/// </summary>
public sealed unsafe class HoldTests
{
    [Fact]
    public void A_users_extra_Release_cannot_end_a_views_hold()
    {
        var values = new HugeArray<long>(1000, 42L);
        values.Acquire();
        NativeArrowColumn column = values.ToArrow();
        values.Release();

        // The view's hold is not an acquisition: a second Release is refused, and so is the dispose.
        Assert.Throws<InvalidOperationException>(values.Release);
        Assert.Throws<InvalidOperationException>(values.Dispose);
        Assert.True(values.IsValid);
        Assert.Equal(42L, ((Int64Array)column.Array).GetValue(999));

        column.Dispose();
        values.Dispose();
        Assert.False(values.IsValid);
    }

    [Fact]
    public void A_users_extra_Release_cannot_end_a_C_exports_hold()
    {
        var values = new HugeArray<int>(4096, 7);
        CArrowArray* exported = CArrowArray.Create();
        try
        {
            values.Acquire();
            using (NativeArrowColumn column = values.ToArrow())
            {
                column.ExportChunk(0, exported);
            }

            values.Release();
            Assert.Throws<InvalidOperationException>(values.Release);
            Assert.Throws<InvalidOperationException>(values.Dispose);

            using (var imported = (Int32Array)CArrowArrayImporter.ImportArray(exported, Int32Type.Default))
            {
                Assert.Equal(7 * 4096L, imported.Values.ToArray().Sum(v => (long)v));
            }

            values.Dispose();
            Assert.False(values.IsValid);
        }
        finally
        {
            CArrowArray.Free(exported);
        }
    }

    [Fact]
    public void Exporting_into_a_structure_that_holds_a_live_export_is_refused_and_the_first_export_still_releases()
    {
        var values = new HugeArray<long>(64, 3L);
        CArrowArray* exported = CArrowArray.Create();
        try
        {
            using (NativeArrowColumn column = values.ToArrow())
            {
                column.ExportChunk(0, exported);
                Assert.Equal("destination", Assert.Throws<ArgumentException>(() => column.ExportChunk(0, exported)).ParamName);
            }

            using (var imported = (Int64Array)CArrowArrayImporter.ImportArray(exported, Int64Type.Default))
            {
                Assert.Equal(3L, imported.GetValue(63));
            }

            // The one export released, nothing holds the column.
            Assert.Equal(0, values.Handle.LeaseCount);
            values.Dispose();
        }
        finally
        {
            CArrowArray.Free(exported);
        }
    }

    [Fact]
    public void Unpin_on_the_memory_manager_is_refused_and_a_pin_ends_once_however_often_its_handle_is_disposed()
    {
        var values = new HugeArray<double>(100, 1.5);
        NativeArrowColumn column = values.ToArrow();
        ReadOnlyMemory<byte> memory = ((DoubleArray)column.Array).ValueBuffer.Memory;
        Assert.True(MemoryMarshal.TryGetMemoryManager(memory, out MemoryManager<byte>? manager));

        MemoryHandle pin = memory.Pin();
        MemoryHandle copy = pin;
        Assert.Throws<InvalidOperationException>(manager!.Unpin);
        column.Dispose();

        // The pin holds the column after its view is gone; disposing two copies of its handle ends it once.
        Assert.Throws<InvalidOperationException>(values.Dispose);
        pin.Dispose();
        copy.Dispose();
        Assert.Equal(0, values.Handle.LeaseCount);
        values.Dispose();
        Assert.False(values.IsValid);
    }

    [Fact]
    public void A_second_pin_keeps_the_column_after_the_first_ends_and_the_view_is_disposed()
    {
        var values = new HugeArray<byte>(64, (byte)9);
        NativeArrowColumn column = values.ToArrow();
        ReadOnlyMemory<byte> memory = ((UInt8Array)column.Array).ValueBuffer.Memory;
        MemoryHandle first = memory.Pin();
        MemoryHandle second = memory.Pin();
        column.Dispose();
        Assert.Throws<ObjectDisposedException>(() => memory.Pin());
        Assert.Throws<ObjectDisposedException>(() => memory.Span[0]);
        first.Dispose();
        first.Dispose();
        Assert.Throws<InvalidOperationException>(values.Dispose);
        Assert.Equal(9, *(byte*)second.Pointer);
        second.Dispose();
        values.Dispose();
        Assert.False(values.IsValid);
    }

    [Fact]
    public void An_arena_reset_is_refused_while_an_array_built_by_the_allocator_is_alive()
    {
        using var arena = new JemArena();
        var allocator = new JemallocArrowAllocator(arena.Options);
        Int64Array array = new Int64Array.Builder().AppendRange(Enumerable.Range(0, 10_000).Select(i => (long)i)).Build(allocator);

        Assert.Throws<InvalidOperationException>(arena.Reset);
        Assert.Equal(9_999L, array.GetValue(9_999));

        // Nothing else in the arena may take the array's place meanwhile: a new array reads its own values.
        using var other = new HugeArray<long>(10_000, -1L, arena.Options);
        Assert.Equal(9_999L, array.GetValue(9_999));
        Assert.Equal(-1L, other[9_999]);

        other.Dispose();
        array.Dispose();
        arena.Reset();
        Assert.Equal(0, arena.UsedBytes);
    }

    [Fact]
    public void An_allocator_block_disposed_while_pinned_is_freed_when_the_pin_ends()
    {
        using var arena = new JemArena();
        var allocator = new JemallocArrowAllocator(arena.Options);
        IMemoryOwner<byte> owner = allocator.Allocate(4096);
        owner.Memory.Span.Fill(5);
        MemoryHandle pin = owner.Memory.Pin();
        owner.Dispose();

        // Arrow is done with it, the pin is not: the block stays, unreadable through the owner but held.
        Assert.True(arena.UsedBytes >= 4096);
        Assert.Throws<InvalidOperationException>(arena.Reset);
        Assert.Equal(5, ((byte*)pin.Pointer)[4095]);
        pin.Dispose();
        Assert.Equal(0, arena.UsedBytes);
        arena.Reset();
    }

    [Fact]
    public void A_view_dropped_without_Dispose_lets_go_of_its_column_once_collected()
    {
        var values = new HugeArray<int>(256, 1);
        DropView(values);
        Finalization.CollectAndFinalize();
        Assert.Equal(0, values.Handle.LeaseCount);
        values.Dispose();
        Assert.False(values.IsValid);
    }

    [Fact]
    public void A_view_held_only_by_its_arrays_keeps_its_column_while_they_are_reachable()
    {
        var values = new HugeArray<int>(256, 1);
        AssertHeldWhileItsArrayIsReachable(values);
        Finalization.CollectAndFinalize();
        Assert.Equal(0, values.Handle.LeaseCount);
        values.Dispose();
        Assert.False(values.IsValid);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void DropView(HugeArray<int> values) => _ = values.ToArrow();

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void AssertHeldWhileItsArrayIsReachable(HugeArray<int> values)
    {
        Int32Array array = ArrayOfDroppedView(values);
        Finalization.CollectAndFinalize();
        Assert.Throws<InvalidOperationException>(values.Dispose);
        Assert.Equal(1, array.GetValue(255));
        GC.KeepAlive(array);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static Int32Array ArrayOfDroppedView(HugeArray<int> values) => (Int32Array)values.ToArrow().Array;
}
