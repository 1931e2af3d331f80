namespace jemalloc.Tests.ChildProcess.Adversarial;

/// <summary>
/// Generations: a stale copy kept since a slot's first free stays invalid however many times the
/// slot is reused. The public API cannot drive a slot to its last generation (2^31 cycles, and no
/// public member shows a slot or its generation), so this checks a bounded number of reuses.
/// </summary>
internal static class GenerationScenarios
{
    internal static void Register(Dictionary<string, Action> all)
    {
        all["generation-reuse"] = Reuse;
    }

    private static void Reuse()
    {
        var first = new FixedBuffer<int>(1);
        FixedBuffer<int> stale = first;
        AllocationHandle staleHandle = first.Handle;
        first.Free();
        var staleText = new FixedUtf8String("x");
        FixedUtf8String staleTextCopy = staleText;
        staleText.Free();

        const int cycles = 2_000_000;
        var seen = new HashSet<AllocationHandle>();
        for (int i = 0; i < cycles; i++)
        {
            var next = new FixedBuffer<int>(1);
            if (next.Handle == staleHandle || stale.IsValid || staleHandle.IsValid)
            {
                Check.Fail("generation", $"cycle {i}: a stale copy became valid again");
                next.Free();
                break;
            }

            if (i < 1000)
            {
                seen.Add(next.Handle);
            }

            if (i % 50_000 == 0)
            {
                next[0] = 7;
                Check.ThrowsExactly<ObjectDisposedException>($"cycle {i}: stale[0]", () => _ = stale[0]);
                Check.ThrowsExactly<ObjectDisposedException>($"cycle {i}: stale[0] = 1", () => stale[0] = 1);
                Check.ThrowsExactly<ObjectDisposedException>($"cycle {i}: stale.Free", stale.Free);
                Check.ThrowsExactly<ObjectDisposedException>($"cycle {i}: stale string", () => staleTextCopy.ToString());
                Check.Equal(7, next[0], $"cycle {i}: new buffer untouched");
            }

            next.Free();
        }

        Check.Equal(1000, seen.Count, "every reuse of the slot has a handle never seen before");
    }
}
