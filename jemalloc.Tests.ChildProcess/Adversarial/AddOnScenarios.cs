using System.Buffers;
using System.Runtime.InteropServices;
using Apache.Arrow;
using Apache.Arrow.C;
using Apache.Arrow.Types;
using jemalloc.Arrow;
using jemalloc.Parquet;
using jemalloc.Parquet.Tests;

namespace jemalloc.Tests.ChildProcess.Adversarial;

/// <summary>
/// The Parquet and Arrow add-ons attacked through their public API, one scenario per class of
/// failure: the library's holds ended by a user's <c>Release()</c> or <c>Unpin()</c>, an arena reset
/// under Arrow buffers, a reader disposed under a read, a footer that declares fewer rows than the
/// pages hold. Each scenario repeats its attack; a crash fails its test through the exit code.
/// </summary>
internal static class AddOnScenarios
{
    internal const string ViewHoldVsExtraRelease = "addon-view-hold-vs-extra-release";
    internal const string ExportHoldVsExtraRelease = "addon-export-hold-vs-extra-release";
    internal const string PinVsUnpinAndDoubleDispose = "addon-pin-vs-unpin-and-double-dispose";
    internal const string ArenaResetUnderArrowArrays = "addon-arena-reset-under-arrow-arrays";
    internal const string ReaderDisposedUnderRead = "addon-reader-disposed-under-read";
    internal const string ForgedFooterFewerRows = "addon-forged-footer-fewer-rows";

    private const int Rounds = 200;

    internal static void Register(Dictionary<string, Action> all)
    {
        all[ViewHoldVsExtraRelease] = ViewHoldVsRelease;
        all[ExportHoldVsExtraRelease] = ExportHoldVsRelease;
        all[PinVsUnpinAndDoubleDispose] = PinVsUnpin;
        all[ArenaResetUnderArrowArrays] = ArenaResetUnderArrays;
        all[ReaderDisposedUnderRead] = ReaderDisposedUnderReads;
        all[ForgedFooterFewerRows] = ForgedFooter;
    }

    /// <summary>An extra <c>Release()</c> beside a view: refused, and the structure stays held and readable.</summary>
    private static void ViewHoldVsRelease()
    {
        for (int round = 0; round < Rounds; round++)
        {
            var values = new HugeArray<long>(4096, round);
            values.Acquire();
            NativeArrowColumn column = values.ToArrow();
            values.Release();
            Check.ThrowsExactly<InvalidOperationException>("an extra Release beside a view", values.Release);
            Check.ThrowsExactly<InvalidOperationException>("Dispose of a viewed structure", values.Dispose);
            // Memory the allocator reuses would show another value here.
            using (var other = new HugeArray<long>(4096, -1L))
            {
                Check.Equal((long)round, ((Int64Array)column.Array).GetValue(4095) ?? -2, "a view's value beside a new array");
            }

            column.Dispose();
            values.Dispose();
        }
    }

    /// <summary>An extra <c>Release()</c> while a C Data Interface export alone holds the structure.</summary>
    private static unsafe void ExportHoldVsRelease()
    {
        for (int round = 0; round < Rounds; round++)
        {
            var values = new HugeArray<int>(1000, round);
            CArrowArray* exported = CArrowArray.Create();
            try
            {
                values.Acquire();
                using (NativeArrowColumn column = values.ToArrow())
                {
                    column.ExportChunk(0, exported);
                }

                values.Release();
                Check.ThrowsExactly<InvalidOperationException>("an extra Release beside an export", values.Release);
                Check.ThrowsExactly<InvalidOperationException>("Dispose of an exported structure", values.Dispose);
                using var other = new HugeArray<int>(1000, -1);
                using (var imported = (Int32Array)CArrowArrayImporter.ImportArray(exported, Int32Type.Default))
                {
                    Check.Equal(round, imported.GetValue(999) ?? -2, "the consumer's value");
                }

                values.Dispose();
                Check.True(!values.IsValid, "a released export lets the structure go");
            }
            finally
            {
                CArrowArray.Free(exported);
            }
        }
    }

    /// <summary><c>MemoryManager.Unpin()</c> and a pin's handle disposed twice: neither ends another party's pin.</summary>
    private static unsafe void PinVsUnpin()
    {
        for (int round = 0; round < Rounds; round++)
        {
            var values = new HugeArray<double>(512, round);
            NativeArrowColumn column = values.ToArrow();
            ReadOnlyMemory<byte> memory = ((DoubleArray)column.Array).ValueBuffer.Memory;
            MemoryHandle mine = memory.Pin();
            MemoryHandle theirs = memory.Pin();
            if (MemoryMarshal.TryGetMemoryManager(memory, out MemoryManager<byte>? manager))
            {
                Check.ThrowsExactly<InvalidOperationException>("MemoryManager.Unpin on a native Arrow buffer", manager.Unpin);
            }
            else
            {
                Check.Fail("a native Arrow buffer", "has no memory manager");
            }

            column.Dispose();
            mine.Dispose();
            mine.Dispose();
            Check.ThrowsExactly<InvalidOperationException>("Dispose while another party's pin is open", values.Dispose);
            Check.Equal((double)round, ((double*)theirs.Pointer)[511], "the other party's pinned value");
            theirs.Dispose();
            values.Dispose();
        }
    }

    /// <summary>An arena reset while arrays built by its allocator live: refused, and the arrays keep their values.</summary>
    private static void ArenaResetUnderArrays()
    {
        using var arena = new JemArena();
        var allocator = new JemallocArrowAllocator(arena.Options);
        for (int round = 0; round < Rounds; round++)
        {
            Int64Array array = new Int64Array.Builder().AppendRange(Enumerable.Repeat((long)round, 1000)).Build(allocator);
            Check.ThrowsExactly<InvalidOperationException>("an arena reset under an Arrow array", arena.Reset);
            using (var other = new HugeArray<long>(1000, -1L, arena.Options))
            {
                Check.Equal((long)round, array.GetValue(999) ?? -2, "an Arrow array's value after a refused reset");
            }

            array.Dispose();
            arena.Reset();
        }
    }

    /// <summary>Dispose from another thread while a read runs, at varied delays: refused or before the read, never under it.</summary>
    private static void ReaderDisposedUnderReads()
    {
        // A read of a million rows takes a few milliseconds; the dispose comes 0 to 2 ms after it starts.
        const int rows = 1_000_000;
        const int rounds = 100;
        string folder = Directory.CreateTempSubdirectory("jemalloc-addon-scenario-").FullName;
        try
        {
            string path = Path.Combine(folder, "values.parquet");
            using (var values = new HugeArray<long>(rows, 3L))
            {
                new NativeParquetWriter().Add("values", values).Write(path);
            }

            int refused = 0;
            for (int round = 0; round < rounds; round++)
            {
                var reader = new NativeParquetReader(path);
                using var started = new Barrier(2);
                var read = new Thread(() =>
                {
                    started.SignalAndWait();
                    try
                    {
                        using HugeArray<long> column = reader.ReadColumn<long>("values");
                        Check.Equal(3L * rows, column.VectorSum(), "a read that a dispose raced");
                    }
                    catch (ObjectDisposedException)
                    {
                        // The dispose came first.
                    }
                });
                read.Start();
                started.SignalAndWait();
                Thread.Sleep(round % 3);
                while (true)
                {
                    try
                    {
                        reader.Dispose();
                        break;
                    }
                    catch (InvalidOperationException)
                    {
                        refused++;
                    }
                }

                read.Join();
                Check.Throws<ObjectDisposedException>("a read after Dispose", () => reader.ReadColumn<long>("values"));
            }

            Check.Info($"INFO {refused} dispose(s) refused over {rounds} rounds");
            Check.True(refused > 0, "some dispose met a read");
        }
        finally
        {
            Directory.Delete(folder, recursive: true);
        }
    }

    /// <summary>A footer forged to declare 600 rows over pages of 1000 values: an <see cref="InvalidDataException"/>, never 600 values.</summary>
    private static void ForgedFooter()
    {
        string folder = Directory.CreateTempSubdirectory("jemalloc-addon-scenario-").FullName;
        try
        {
            string path = Path.Combine(folder, "forged.parquet");
            using (var values = new HugeArray<long>(1000, 7L))
            {
                new NativeParquetWriter().Add("values", values).Write(path);
            }

            Check.True(ParquetFooter.RewriteCounts(path, 1000, 600) >= 2, "the forged footer's row counts");
            using var reader = new NativeParquetReader(path);
            Check.Throws<InvalidDataException>("ReadColumn of a forged footer", () => reader.ReadColumn<long>("values").Dispose());
            Check.Throws<InvalidDataException>("ReadNullableColumn of a forged footer", () => reader.ReadNullableColumn<long>("values").Dispose());
        }
        finally
        {
            Directory.Delete(folder, recursive: true);
        }
    }
}
