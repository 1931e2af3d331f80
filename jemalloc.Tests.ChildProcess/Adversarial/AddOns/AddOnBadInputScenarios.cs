using jemalloc.Parquet;
using jemalloc.Parquet.Tests;

namespace jemalloc.Tests.ChildProcess.Adversarial;

/// <summary>
/// Failure class: bad input to the Parquet add-on: a forged footer that declares fewer rows than the
/// pages hold is an InvalidDataException, never a write past the columns.
/// </summary>
internal static class AddOnBadInputScenarios
{
    internal const string ForgedFooterFewerRows = "addon-forged-footer-fewer-rows";

    internal static void Register(Dictionary<string, Action> all)
    {
        all[ForgedFooterFewerRows] = ForgedFooter;
    }

    /// <summary>A footer forged to declare 600 rows over pages of 1000 values: an <see cref="InvalidDataException"/>, never 600 values.</summary>
    private static void ForgedFooter()
    {
        string folder = Directory.CreateTempSubdirectory("jemalloc-addon-scenario-").FullName;
        try
        {
            string path = Path.Combine(folder, "forged.parquet");
            using (var values = new HugeArray<long>(1000, 7L))
            {
                new NativeParquetWriter().Add("values", values).Write(path);
            }

            Check.True(ParquetFooter.RewriteCounts(path, 1000, 600) >= 2, "the forged footer's row counts");
            using var reader = new NativeParquetReader(path);
            Check.Throws<InvalidDataException>("ReadColumn of a forged footer", () => reader.ReadColumn<long>("values").Dispose());
            Check.Throws<InvalidDataException>("ReadNullableColumn of a forged footer", () => reader.ReadNullableColumn<long>("values").Dispose());
        }
        finally
        {
            Directory.Delete(folder, recursive: true);
        }
    }
}
