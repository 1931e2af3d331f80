using System.Buffers;
using System.Runtime.InteropServices;
using Apache.Arrow;
using Apache.Arrow.C;
using Apache.Arrow.Types;
using jemalloc.Arrow;

namespace jemalloc.Tests.ChildProcess.Adversarial;

/// <summary>
/// Failure class: lifetime misuse of the Parquet and Arrow add-ons, through their public API: the
/// library's holds (an Arrow view, a C Data Interface export, a pin) ended by a user's <c>Release()</c>,
/// <c>Unpin()</c> or a pin's handle disposed twice: refused, and the structure stays held and readable.
/// Each scenario repeats its attack; a crash fails its test through the exit code.
/// </summary>
internal static class AddOnLifetimeMisuseScenarios
{
    internal const string ViewHoldVsExtraRelease = "addon-view-hold-vs-extra-release";
    internal const string ExportHoldVsExtraRelease = "addon-export-hold-vs-extra-release";
    internal const string PinVsUnpinAndDoubleDispose = "addon-pin-vs-unpin-and-double-dispose";

    internal static void Register(Dictionary<string, Action> all)
    {
        all[ViewHoldVsExtraRelease] = ViewHoldVsRelease;
        all[ExportHoldVsExtraRelease] = ExportHoldVsRelease;
        all[PinVsUnpinAndDoubleDispose] = PinVsUnpin;
    }

    private const int Rounds = 200;

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
}
