namespace jemalloc.Tests.ChildProcess.Adversarial;

/// <summary>
/// Failure class: JIT shape, loops as users write them, which the JIT recompiles while they run
/// (on-stack replacement, with profile-guided optimization, the runtime's defaults): a structure created
/// with a value and disposed on every iteration. The library's inlinable paths once made .NET 10's JIT
/// hang on such a loop and grow until the OOM killer came; each loop here must finish.
/// </summary>
internal static class BufferJitShapeScenarios
{
    internal const string JitCreateWithValueLoops = "jit-create-with-value-loops";

    internal static void Register(Dictionary<string, Action> all)
    {
        all[JitCreateWithValueLoops] = CreateWithValueLoops;
    }

    private const int Iterations = 100_000;

    // Each loop is written in place, not through a helper, so that it is the loop the JIT replaces on the stack.
    private static void CreateWithValueLoops()
    {
        long sum = 0;
        for (int i = 0; i < Iterations; i++)
        {
            using var array = new SafeArray<long>(100, 1);
            sum += array[99];
        }

        Check.Equal((long)Iterations, sum, "SafeArray<long> create-with-value loop's sum");

        sum = 0;
        for (int i = 0; i < Iterations; i++)
        {
            using var array = new SafeArray<int>(100, 2);
            sum += array[0];
        }

        Check.Equal(2L * Iterations, sum, "SafeArray<int> create-with-value loop's sum");

        sum = 0;
        for (int i = 0; i < Iterations; i++)
        {
            using var array = new HugeArray<long>(100, 3);
            sum += array[50];
        }

        Check.Equal(3L * Iterations, sum, "HugeArray<long> create-with-value loop's sum");

        sum = 0;
        for (int i = 0; i < Iterations; i++)
        {
            var buffer = new FixedBuffer<long>(100, 4);
            sum += buffer[1];
            buffer.Free();
        }

        Check.Equal(4L * Iterations, sum, "FixedBuffer<long> create-with-value loop's sum");
    }
}
