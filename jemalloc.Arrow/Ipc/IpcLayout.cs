namespace jemalloc.Arrow.Ipc;

/// <summary>
/// What one top-level column takes of a record batch: its field nodes and buffers (its children's
/// included, in the pre-order the format lists them), and how many of its nodes are views, each of
/// which adds the batch's variadic buffer count for it. <see cref="Known"/> is false for a type this
/// reader cannot size, past which no column can be located.
/// </summary>
internal readonly record struct IpcLayout(int Nodes, int Buffers, int Views, bool Known);
