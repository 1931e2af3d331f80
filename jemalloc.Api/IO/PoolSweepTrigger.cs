using System.Runtime.InteropServices;

namespace jemalloc.IO;

/// <summary>
/// Runs a <see cref="JemMemoryPool"/>'s sweep for dropped owners after every garbage collection: an
/// object nothing references, whose finalizer sweeps and leaves a new one for the next collection.
/// It holds the pool through a weak handle (not a <see cref="WeakReference{T}"/>, whose own finalizer
/// could run first), passed on from trigger to trigger and freed once the pool is unreachable.
/// </summary>
internal sealed class PoolSweepTrigger
{
    private readonly GCHandle _pool;

    private PoolSweepTrigger(GCHandle pool) => _pool = pool;

    /// <summary>Sweeps, then waits for the next collection; or frees the handle once the pool is gone.</summary>
    ~PoolSweepTrigger()
    {
        if (_pool.Target is JemMemoryPool pool)
        {
            pool.SweepDroppedOwners();
            _ = new PoolSweepTrigger(_pool);
        }
        else
        {
            _pool.Free();
        }
    }

    /// <summary>Starts the sweeps of a new pool.</summary>
    internal static void Start(JemMemoryPool pool) => _ = new PoolSweepTrigger(GCHandle.Alloc(pool, GCHandleType.Weak));
}
