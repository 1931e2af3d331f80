namespace jemalloc.Internal;

/// <summary>A structure whose writes a <see cref="SingleWriterGuard"/> guards: the guard asks it whether it was disposed.</summary>
internal interface IWriterGuarded
{
    /// <summary>Whether the structure was disposed.</summary>
    bool IsDisposed { get; }
}
