using static jemalloc.Tests.ChildProcess.Adversarial.ScenarioHelpers;

namespace jemalloc.Tests.ChildProcess.Adversarial;

/// <summary>
/// Failure class: bad input and absurd sizes for the record types: a stored string compared with a .NET
/// string of more than int.MaxValue / 3 characters compares right; an index asked for more keys than the
/// machine can hold throws OutOfMemoryException.
/// </summary>
internal static class RecordBadInputScenarios
{
    internal const string RecordsHugeStringCompare = "records-huge-string-compare";
    internal const string RecordsIndexTooBig = "records-index-too-big";

    internal static void Register(Dictionary<string, Action> all)
    {
        all[RecordsHugeStringCompare] = HugeStringCompare;
        all[RecordsIndexTooBig] = IndexTooBig;
    }

    // Each UTF-16 code unit takes up to three UTF-8 bytes: for a text longer than int.MaxValue / 3
    // that bound no longer fits an int, and the comparison must still be right.
    private static void HugeStringCompare()
    {
        const int length = (int.MaxValue / 3) + 1000;
        string text = new('a', length);
        using var store = new Utf8StringStore();
        StoredUtf8String stored = store.Add(text);
        Check.Equal(length, stored.Length, "the huge string's stored length");
        Check.True(stored.Equals(text), "Equals(string) of a string longer than int.MaxValue / 3 characters");
        Check.True(stored.StartsWith(text), "StartsWith(string) of a prefix longer than int.MaxValue / 3 characters");
        text = null!;
        GC.Collect();
        text = string.Create(length, 0, (span, _) =>
        {
            span.Fill('a');
            span[^1] = 'b';
        });
        Check.True(!stored.Equals(text), "Equals(string) is false when the last character differs");
        Check.True(!stored.StartsWith(text), "StartsWith(string) is false when the last character differs");
    }

    // int.MaxValue keys need a table of 2^32 entries of 16 bytes: more than the machine has, so an
    // OutOfMemoryException at once, never a process killed while zero-filling it.
    private static void IndexTooBig()
    {
        Check.Info($"INFO physical+swap={PhysicalPlusSwap():N0} bytes");
        long live = AllocationLedger.LiveCount;
        try
        {
            using var index = new NativeHashIndex<long>(int.MaxValue, AllocationOptions.Default);
            Check.True(index.Capacity >= int.MaxValue, "an index for int.MaxValue keys has room for them");
        }
        catch (OutOfMemoryException e)
        {
            Check.Info($"RESULT OutOfMemoryException: {e.Message}");
            Check.Pass();
        }

        Check.Throws<ArgumentOutOfRangeException>("an expected count beyond long.MaxValue / 64", () => new NativeHashIndex<long>(long.MaxValue, AllocationOptions.Default).Dispose());
        Check.Throws<ArgumentOutOfRangeException>("a negative expected count", () => new NativeHashIndex<long>(-1, AllocationOptions.Default).Dispose());
        Check.Throws<OutOfMemoryException>("the largest expected count", () => new NativeHashIndex<long>(long.MaxValue / 64, AllocationOptions.Default).Dispose());
        Check.Equal(live, AllocationLedger.LiveCount, "nothing left in the ledger by the refused tables");
    }
}
