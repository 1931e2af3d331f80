using jemalloc.Tests.ChildProcess.Adversarial;

namespace jemalloc.Tests.Adversarial;

/// <summary>
/// Failure class: JIT shape, loops as users write them, recompiled by the JIT while they run: each must
/// finish, in a child process so that a hang fails this test instead of the run. Family: buffers
/// (<see cref="BufferJitShapeScenarios"/>).
/// </summary>
[Collection(AdversarialScenarios.Name)]
public sealed class JitShapeTests
{
    [Fact]
    public void Loops_that_create_structures_with_a_value_and_dispose_them_finish_under_the_runtimes_default_JIT() =>
        AdversarialChild.AssertClean(BufferJitShapeScenarios.JitCreateWithValueLoops);
}
