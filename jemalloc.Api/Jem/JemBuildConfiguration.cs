namespace jemalloc;

/// <summary>How the loaded jemalloc was compiled (<c>config.*</c>), from <see cref="Jem.BuildConfiguration"/>.</summary>
/// <param name="Debug">A checked build (<c>--enable-debug</c>): slower, with assertions.</param>
/// <param name="Stats">Statistics are collected (<see cref="Jem.GetStatistics(bool)"/> needs it).</param>
/// <param name="Prof">Heap profiling is built in.</param>
/// <param name="Fill">Junk and zero filling (<c>opt.junk</c>, <c>opt.zero</c>) are built in.</param>
/// <param name="LazyLock">Locking starts only when a second thread appears.</param>
/// <param name="Utrace">Allocation tracing is built in.</param>
/// <param name="Xmalloc">Abort-on-out-of-memory support (<c>opt.xmalloc</c>) is built in.</param>
/// <param name="MallocConf">The options compiled into the library (<c>--with-malloc-conf</c>); empty when none.</param>
public readonly record struct JemBuildConfiguration(
    bool Debug,
    bool Stats,
    bool Prof,
    bool Fill,
    bool LazyLock,
    bool Utrace,
    bool Xmalloc,
    string MallocConf);
