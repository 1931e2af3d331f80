namespace jemalloc.Benchmarks.Records;

/// <summary>The layouts <c>jembench records</c> compares.</summary>
public enum RecordsSide
{
    /// <summary>Class records in a List and a Dictionary by id.</summary>
    Class,

    /// <summary>Struct records with string names in an array, a score column, and a Dictionary from id to row.</summary>
    Struct,

    /// <summary>Native records (HugeArray), names in a Utf8StringStore with a column of their values, a native score column and a NativeHashIndex.</summary>
    Native,
}
