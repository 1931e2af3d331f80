using jemalloc.Benchmarks.Infrastructure;

namespace jemalloc.Cli.Tests.Benchmarks;

/// <summary>
/// The threads the multi-thread alloc suite measures with: released together, every one running
/// once per run, a worker's exception and a worker that does not come back surfaced to the caller.
/// </summary>
public sealed class WorkerTeamTests
{
    private static readonly TimeSpan Generous = TimeSpan.FromMinutes(2);

    [Fact]
    public void Every_worker_runs_once_per_run_with_its_own_index()
    {
        using var team = new WorkerTeam(3, "test");
        int[] runs = new int[3];
        for (int run = 1; run <= 4; run++)
        {
            team.Run(index => Interlocked.Increment(ref runs[index]), Generous);
            Assert.Equal([run, run, run], runs);
        }
    }

    [Fact]
    public void The_workers_run_at_the_same_time()
    {
        // Each worker waits until all have arrived: workers started one after the other would never all arrive.
        using var team = new WorkerTeam(4, "test");
        int arrived = 0;
        int metAll = 0;
        team.Run(_ =>
        {
            Interlocked.Increment(ref arrived);
            if (SpinWait.SpinUntil(() => Volatile.Read(ref arrived) == 4, Generous))
            {
                Interlocked.Increment(ref metAll);
            }
        }, Generous);
        Assert.Equal(4, arrived);
        Assert.Equal(4, metAll);
    }

    [Fact]
    public void A_worker_exception_reaches_the_caller_after_every_worker_is_back_and_the_team_runs_again()
    {
        using var team = new WorkerTeam(3, "test");
        int finished = 0;
        AggregateException thrown = Assert.Throws<AggregateException>(() => team.Run(index =>
        {
            if (index == 1)
            {
                throw new InvalidDataException("worker 1 broke");
            }

            Interlocked.Increment(ref finished);
        }, Generous));
        Assert.Equal(2, finished);
        Assert.Contains("1 of 3 worker threads failed", thrown.Message, StringComparison.Ordinal);
        Assert.Equal("worker 1 broke", Assert.IsType<InvalidDataException>(Assert.Single(thrown.InnerExceptions)).Message);

        // The exception of one run does not leak into the next.
        int next = 0;
        team.Run(_ => Interlocked.Increment(ref next), Generous);
        Assert.Equal(3, next);
    }

    [Fact]
    public void A_worker_that_does_not_finish_makes_the_run_time_out_naming_it_and_the_team_refuses_to_run_again()
    {
        using var hold = new ManualResetEventSlim();
        var team = new WorkerTeam(2, "test");
        int finished = 0;
        TimeoutException timeout = Assert.Throws<TimeoutException>(() => team.Run(index =>
        {
            if (index == 0)
            {
                // Held until the test has seen the timeout; bounded so a broken test cannot hang.
                hold.Wait(Generous);
            }

            Interlocked.Increment(ref finished);
        }, TimeSpan.FromSeconds(5)));
        Assert.Contains("1 of 2 worker threads (thread 0) did not finish", timeout.Message, StringComparison.Ordinal);
        Assert.True(Volatile.Read(ref finished) >= 1, "the other worker ran");

        InvalidOperationException refused = Assert.Throws<InvalidOperationException>(() => team.Run(_ => { }, Generous));
        Assert.Contains("timed out", refused.Message, StringComparison.Ordinal);
        hold.Set();
        team.Dispose();
    }

    [Fact]
    public void Wrong_arguments_and_a_disposed_team_are_refused()
    {
        Assert.Throws<ArgumentOutOfRangeException>(() => new WorkerTeam(0, "test"));
        Assert.Throws<ArgumentOutOfRangeException>(() => new WorkerTeam(WorkerTeam.MaxThreads + 1, "test"));
        Assert.Throws<ArgumentNullException>(() => new WorkerTeam(1, null!));
        var team = new WorkerTeam(1, "test");
        Assert.Throws<ArgumentNullException>(() => team.Run(null!, Generous));
        Assert.Throws<ArgumentOutOfRangeException>(() => team.Run(_ => { }, TimeSpan.Zero));
        team.Dispose();
        team.Dispose();
        Assert.Throws<ObjectDisposedException>(() => team.Run(_ => { }, Generous));
    }
}
