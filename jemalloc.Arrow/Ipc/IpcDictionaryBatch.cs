namespace jemalloc.Arrow.Ipc;

/// <summary>
/// One dictionary batch: the record batch of one column that holds (or, a delta, appends to) the
/// values of dictionary <see cref="Id"/>, and how many record batches came before it in the input.
/// </summary>
internal sealed record IpcDictionaryBatch(long Id, IpcBatch Batch, bool IsDelta, int RecordBatchesBefore);
