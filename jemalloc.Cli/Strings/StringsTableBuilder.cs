using jemalloc.Parquet;
using ParquetSharp;
using Encoding = System.Text.Encoding;

namespace jemalloc.Cli.Strings;

/// <summary>
/// Makes <see cref="StringsData"/>'s table row by row in native columns (on the pages the library chooses by default), adding up the
/// right results as it goes, and writes it to Parquet. Owns its columns until disposed.
/// </summary>
internal sealed class StringsTableBuilder : IDisposable
{
    private static readonly byte[] Prefix = Encoding.UTF8.GetBytes(StringsData.NotePrefix);

    private readonly long _rows;
    private readonly HugeArray<long> _ids;
    private readonly NativeStringColumnBuilder _categories = new(isUtf8: true);
    private readonly NativeStringColumnBuilder _regions = new(isUtf8: true);
    private readonly NativeStringColumnBuilder _notes = new(isUtf8: true);
    private readonly long[] _groupRows = new long[StringsData.Categories];
    private readonly long[] _groupCents = new long[StringsData.Categories];
    private HugeArray<Int128>? _amounts;
    private HugeArray<byte>? _amountValidity;
    private long _filtered;
    private long _idSum;

    public StringsTableBuilder(long rows)
    {
        _rows = rows;
        _ids = new HugeArray<long>(rows);
        _amounts = new HugeArray<Int128>(rows);
        _amountValidity = new HugeArray<byte>((rows + 7) / 8);
    }

    // Appends row `row` (rows come in order) and adds it to the results.
    public void Add(long row, Span<byte> noteBuffer)
    {
        _ids[row] = row;
        _idSum += row;
        int category = StringsData.CategoryOf(row);
        _categories.Append(StringsData.CategoryName(category));
        _regions.Append(StringsData.RegionName(StringsData.RegionOf(row)));
        long? amount = StringsData.AmountOf(row);
        if (amount is long cents)
        {
            _amounts![row] = cents;
            _amountValidity![row >> 3] |= (byte)(1 << (int)(row & 7));
        }

        int noteLength = StringsData.NoteOf(row, noteBuffer);
        if (noteLength < 0)
        {
            _notes.AppendNull();
            return;
        }

        ReadOnlySpan<byte> note = noteBuffer[..noteLength];
        _notes.Append(note);
        if (note.StartsWith(Prefix))
        {
            _filtered++;
            _groupRows[category]++;
            _groupCents[category] += amount ?? 0;
        }
    }

    public void Write(string path, Compression codec)
    {
        using NativeStringColumn categories = _categories.Build();
        using NativeStringColumn regions = _regions.Build();
        using NativeStringColumn notes = _notes.Build();
        var amounts = new DecimalColumn(_amounts!, _amountValidity, _rows, StringsData.AmountPrecision, StringsData.AmountScale);
        _amounts = null;
        _amountValidity = null;
        using (amounts)
        {
            StringBytes = categories.ByteCount + regions.ByteCount + notes.ByteCount;
            new NativeParquetWriter { Compression = codec, RowGroupSize = StringsData.RowGroupRows }
                .Add("id", _ids)
                .Add("category", categories)
                .Add("region", regions)
                .Add("note", notes)
                .Add("amount", amounts)
                .Write(path);
        }
    }

    // The UTF-8 bytes of the three string columns, known once written.
    public long StringBytes { get; private set; }

    public StringsReference Reference()
    {
        var groups = new List<StringsGroup>();
        for (int c = 0; c < StringsData.Categories; c++)
        {
            if (_groupRows[c] > 0)
            {
                groups.Add(new StringsGroup(Encoding.UTF8.GetString(StringsData.CategoryName(c)), _groupRows[c], _groupCents[c]));
            }
        }

        return new StringsReference(_rows, _filtered, _idSum, StringBytes, StringsGroup.Sorted(groups));
    }

    public void Dispose()
    {
        _ids.Dispose();
        _categories.Dispose();
        _regions.Dispose();
        _notes.Dispose();
        _amounts?.Dispose();
        _amountValidity?.Dispose();
    }
}
