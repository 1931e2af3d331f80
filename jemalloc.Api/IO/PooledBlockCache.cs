using System.Buffers;
using System.Numerics;
using jemalloc.Ledger;

namespace jemalloc.IO;

/// <summary>
/// A <see cref="JemMemoryPool"/>'s size classes: for each, the returned blocks kept for its next rents
/// and the books of its rents and returns, under the class's own spin gate. Without the kept blocks every
/// rent of a pipe's 4-64 KiB segments would go past jemalloc's thread caches (which hold no block
/// above 32 KiB) to its arenas, and to the ledger; with the books here a rent and a return each take
/// one atomic instruction, instead of atomic counters that the renting and the returning thread would both write.
/// </summary>
/// <remarks>
/// <para>
/// The classes are the powers of two from 64 bytes, as <see cref="MemoryPool{T}.Shared"/>'s arrays
/// are: a pipe writes into what is left of a block before it rents another, so a block rounded up is
/// not wasted there. Blocks of up to <see cref="MaxCachedBlockSize"/> bytes are kept, each class up to
/// an equal share of the pool's byte limit and at most <see cref="MaxBlocksPerClass"/> blocks; larger
/// blocks, and blocks cut to a pool's maximum size, share one class that keeps none.
/// </para>
/// <para>
/// A kept block stays a live ledger allocation, so an arena reset invalidates it as any other: a rent
/// skips such blocks.
/// </para>
/// </remarks>
internal sealed class PooledBlockCache
{
    /// <summary>The largest block kept, in bytes.</summary>
    internal const int MaxCachedBlockSize = 1 << LgLargestKeptClass;

    /// <summary>The most blocks one size class keeps.</summary>
    internal const int MaxBlocksPerClass = 64;

    private const int LgSmallestClass = 6;
    private const int LgLargestKeptClass = 20;
    private const int KeptClassCount = LgLargestKeptClass - LgSmallestClass + 1;

    // The kept classes, then the one for blocks that are never kept.
    private readonly SizeClass[] _classes = new SizeClass[KeptClassCount + 1];
    private volatile bool _closed;

    /// <summary>Creates the classes, sharing <paramref name="maxBytes"/> equally among the kept ones.</summary>
    internal PooledBlockCache(long maxBytes)
    {
        for (int index = 0; index < _classes.Length; index++)
        {
            long share = index < KeptClassCount ? maxBytes / KeptClassCount / SizeOfClass(index) : 0;
            _classes[index] = new SizeClass((int)Math.Min(share, MaxBlocksPerClass));
        }
    }

    /// <summary>
    /// The size of the block a rent of <paramref name="size"/> bytes gets: the power of two at or above
    /// it (at least 64), unless that is past <paramref name="maxSize"/>, in which case the request itself.
    /// </summary>
    internal static int BlockSizeFor(int size, int maxSize)
    {
        long classSize = Math.Max(1L << LgSmallestClass, (long)BitOperations.RoundUpToPowerOf2((uint)size));
        return classSize > maxSize ? maxSize : (int)classSize;
    }

    /// <summary>
    /// Counts a rent of a <paramref name="size"/>-byte block and, if <paramref name="take"/>, takes a
    /// kept block of that size if there is one still valid; otherwise (null) the caller allocates one, or calls <see cref="Uncount"/> if it cannot.
    /// </summary>
    internal PooledBlockAllocation? Rent(int size, bool take)
    {
        SizeClass sizeClass = ClassOf(size);
        sizeClass.Enter();
        try
        {
            sizeClass.Rents++;
            sizeClass.RentedBytes += size;
            while (take && sizeClass.Kept > 0)
            {
                sizeClass.Kept--;
                PooledBlockAllocation block = sizeClass.Blocks![sizeClass.Kept]!;
                sizeClass.Blocks[sizeClass.Kept] = null;
                // An arena reset invalidated (and freed) the blocks of its arena it found here.
                if (block.LedgerBlock.IsLive)
                {
                    return block;
                }
            }
        }
        finally
        {
            sizeClass.Exit();
        }

        return null;
    }

    /// <summary>Takes back the count of a rent whose block could not be allocated.</summary>
    internal void Uncount(int size)
    {
        SizeClass sizeClass = ClassOf(size);
        sizeClass.Enter();
        try
        {
            sizeClass.Rents--;
            sizeClass.RentedBytes -= size;
        }
        finally
        {
            sizeClass.Exit();
        }
    }

    /// <summary>Counts the return of a <paramref name="size"/>-byte block whose block comes back later (it is pinned).</summary>
    internal void CountReturn(int size)
    {
        SizeClass sizeClass = ClassOf(size);
        sizeClass.Enter();
        try
        {
            sizeClass.Returns++;
            sizeClass.ReturnedBytes += size;
        }
        finally
        {
            sizeClass.Exit();
        }
    }

    /// <summary>
    /// Keeps <paramref name="block"/> for the next rent of its size, counting its return if <paramref name="count"/>;
    /// <see langword="false"/> (the caller frees it) if <paramref name="keep"/> is false, its class is
    /// full, or the cache closed.
    /// </summary>
    internal bool Return(PooledBlockAllocation block, bool count, bool keep)
    {
        int size = block.Length;
        SizeClass sizeClass = ClassOf(size);
        sizeClass.Enter();
        try
        {
            if (count)
            {
                sizeClass.Returns++;
                sizeClass.ReturnedBytes += size;
            }

            // Checked under the class's lock: Trim(close) drains every class under its lock after closing.
            if (keep && !_closed && sizeClass.Kept < sizeClass.Capacity)
            {
                sizeClass.Blocks ??= new PooledBlockAllocation?[sizeClass.Capacity];
                sizeClass.Blocks[sizeClass.Kept] = block;
                sizeClass.Kept++;
                return true;
            }
        }
        finally
        {
            sizeClass.Exit();
        }

        return false;
    }

    /// <summary>Frees every kept block; with <paramref name="close"/>, keeps none from now on.</summary>
    /// <returns>How many blocks were freed.</returns>
    internal int Trim(bool close)
    {
        if (close)
        {
            _closed = true;
        }

        var blocks = new List<LedgerBlock>();
        foreach (SizeClass sizeClass in _classes)
        {
            sizeClass.Enter();
            try
            {
                for (int i = 0; i < sizeClass.Kept; i++)
                {
                    blocks.Add(sizeClass.Blocks![i]!.LedgerBlock);
                    sizeClass.Blocks[i] = null;
                }

                sizeClass.Kept = 0;
            }
            finally
            {
                sizeClass.Exit();
            }
        }

        // Outside the locks: a free may wait for an arena's gate.
        foreach (LedgerBlock block in blocks)
        {
            block.FreeOwned();
        }

        return blocks.Count;
    }

    /// <summary>The books summed over the classes: rents, returns, their bytes, and the blocks and bytes kept (and not freed by an arena reset since).</summary>
    internal (long Rents, long Returns, long RentedBytes, long ReturnedBytes, long KeptCount, long KeptBytes) Totals()
    {
        long rents = 0, returns = 0, rentedBytes = 0, returnedBytes = 0, keptCount = 0, keptBytes = 0;
        for (int index = 0; index < _classes.Length; index++)
        {
            SizeClass sizeClass = _classes[index];
            sizeClass.Enter();
            try
            {
                rents += sizeClass.Rents;
                returns += sizeClass.Returns;
                rentedBytes += sizeClass.RentedBytes;
                returnedBytes += sizeClass.ReturnedBytes;
                // Blocks an arena reset freed are skipped by the next rent; they are no longer held.
                int held = 0;
                for (int i = 0; i < sizeClass.Kept; i++)
                {
                    held += sizeClass.Blocks![i]!.LedgerBlock.IsLive ? 1 : 0;
                }

                keptCount += held;
                keptBytes += (long)held * SizeOfClass(index);
            }
            finally
            {
                sizeClass.Exit();
            }
        }

        return (rents, returns, rentedBytes, returnedBytes, keptCount, keptBytes);
    }

    /// <summary>The class of a <paramref name="size"/>-byte block: its power of two's up to <see cref="MaxCachedBlockSize"/>, otherwise the one that keeps none.</summary>
    private SizeClass ClassOf(int size)
    {
        int lg = BitOperations.Log2((uint)size);
        return size <= MaxCachedBlockSize && size == 1 << lg && lg >= LgSmallestClass ? _classes[lg - LgSmallestClass] : _classes[KeptClassCount];
    }

    private static int SizeOfClass(int index) => index < KeptClassCount ? 1 << (index + LgSmallestClass) : 0;

    private sealed class SizeClass(int capacity)
    {
        // A spin gate, not a Lock: what it guards is a pop or a push and a few counters, and a Lock's
        // enter and exit are two atomic instructions where this takes one (its exit is a plain store).
        private int _gate;
        internal readonly int Capacity = capacity;
        internal PooledBlockAllocation?[]? Blocks;
        internal int Kept;
        internal long Rents;
        internal long Returns;
        internal long RentedBytes;
        internal long ReturnedBytes;

        internal void Enter()
        {
            if (Interlocked.CompareExchange(ref _gate, 1, 0) != 0)
            {
                EnterContended();
            }
        }

        internal void Exit() => Volatile.Write(ref _gate, 0);

        private void EnterContended()
        {
            var spin = default(SpinWait);
            do
            {
                spin.SpinOnce();
            }
            while (Volatile.Read(ref _gate) != 0 || Interlocked.CompareExchange(ref _gate, 1, 0) != 0);
        }
    }
}
