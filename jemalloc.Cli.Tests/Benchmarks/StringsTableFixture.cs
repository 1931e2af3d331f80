using jemalloc.Cli.Strings;
using ParquetSharp;

namespace jemalloc.Cli.Tests.Benchmarks;

/// <summary>
/// One <c>jembench strings</c> table shared by a test class: more rows than one row group, a row count
/// that is no multiple of 8 (the selection bitmap's last byte), written once as zstd Parquet.
/// </summary>
public sealed class StringsTableFixture : IDisposable
{
    public const long Rows = StringsData.RowGroupRows + 4_099;

    private readonly string _folder = Directory.CreateTempSubdirectory("strings-table-").FullName;

    public StringsTableFixture()
    {
        Path = System.IO.Path.Combine(_folder, "table.parquet");
        Reference = StringsData.Write(Path, Rows, Compression.Zstd);
    }

    public string Path { get; }

    public StringsReference Reference { get; }

    public void Dispose() => Directory.Delete(_folder, recursive: true);
}
