using jemalloc.Tests.Support;

namespace jemalloc.Tests.Buffers;

/// <summary>
/// Exceptions name what was wrong: a freed <see cref="FixedUtf8String"/> names itself, not the
/// <see cref="FixedBuffer{T}"/> it is built on, and a range whose start is fine but whose count or
/// length runs past the end (or is negative) names the count parameter, not the start.
/// </summary>
[Collection(LeakChecked.Name)]
public sealed class ArgumentNamingTests : LeakCheckedTest
{
    public static TheoryData<string> FreedStringOperations() =>
    [
        "Length", "ToString", "ToArray", "CopyTo", "Lease", "IndexOf", "IndexOfChar", "LastIndexOf", "StartsWith",
        "EndsWith", "Equals", "EqualsString", "GetHashCode", "CompareTo", "Substring", "Acquire", "Release", "Free", "Pointer",
    ];

    [Theory]
    [MemberData(nameof(FreedStringOperations))]
    public void A_freed_FixedUtf8String_names_itself_in_every_exception(string operation)
    {
        var text = new FixedUtf8String("hello");
        var other = new FixedUtf8String("other");
        FixedUtf8String copy = text;
        text.Free();
        Action act = operation switch
        {
            "Length" => () => _ = copy.Length,
            "ToString" => () => _ = copy.ToString(),
            "ToArray" => () => _ = copy.ToArray(),
            "CopyTo" => () => copy.CopyTo(new byte[16]),
            "Lease" => () => { using ReadOnlyMemoryLease<byte> lease = copy.Lease(); },
            "IndexOf" => () => _ = copy.IndexOf("h"),
            "IndexOfChar" => () => _ = copy.IndexOf('h'),
            "LastIndexOf" => () => _ = copy.LastIndexOf(other),
            "StartsWith" => () => _ = copy.StartsWith("h"),
            "EndsWith" => () => _ = copy.EndsWith(other),
            "Equals" => () => _ = copy.Equals(other),
            "EqualsString" => () => _ = copy.Equals("hello"),
            "GetHashCode" => () => _ = copy.GetHashCode(),
            "CompareTo" => () => _ = copy.CompareTo(other),
            "Substring" => () => _ = copy.Substring(1),
            "Acquire" => copy.Acquire,
            "Release" => copy.Release,
            "Free" => copy.Free,
            "Pointer" => () => _ = copy.Pointer,
            _ => throw new ArgumentOutOfRangeException(nameof(operation)),
        };

        ObjectDisposedException e = Assert.Throws<ObjectDisposedException>(act);
        other.Free();
        Assert.Equal("FixedUtf8String", e.ObjectName);
        Assert.DoesNotContain("FixedBuffer", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void FixedUtf8String_Substring_names_the_argument_that_is_wrong()
    {
        var text = new FixedUtf8String("naïve text"); // 'ï' is bytes 2 and 3
        try
        {
            Assert.Equal("startIndex", Assert.Throws<ArgumentOutOfRangeException>(() => text.Substring(-1, 2)).ParamName);
            Assert.Equal("startIndex", Assert.Throws<ArgumentOutOfRangeException>(() => text.Substring(12, 0)).ParamName);
            Assert.Equal("length", Assert.Throws<ArgumentOutOfRangeException>(() => text.Substring(5, 10)).ParamName);
            Assert.Equal("length", Assert.Throws<ArgumentOutOfRangeException>(() => text.Substring(1, -1)).ParamName);
            // A cut at the start names the start; a cut at the end names the length.
            Assert.Equal("startIndex", Assert.Throws<ArgumentException>(() => text.Substring(3, 2)).ParamName);
            Assert.Equal("length", Assert.Throws<ArgumentException>(() => text.Substring(0, 3)).ParamName);
        }
        finally
        {
            text.Free();
        }
    }

    [Fact]
    public void GetWrittenSpan_names_the_length_when_the_start_is_inside()
    {
        using var writer = new NativeBufferWriter<int>();
        writer.GetSpan(10);
        writer.Advance(10);
        Assert.Equal("start", Assert.Throws<ArgumentOutOfRangeException>(() => writer.GetWrittenSpan(-1, 1)).ParamName);
        Assert.Equal("start", Assert.Throws<ArgumentOutOfRangeException>(() => writer.GetWrittenSpan(11, 0)).ParamName);
        Assert.Equal("length", Assert.Throws<ArgumentOutOfRangeException>(() => writer.GetWrittenSpan(9, 2)).ParamName);
        Assert.Equal("length", Assert.Throws<ArgumentOutOfRangeException>(() => writer.GetWrittenSpan(5, -1)).ParamName);
        Assert.Equal("length", Assert.Throws<ArgumentOutOfRangeException>(() => writer.GetWrittenSpan(10, 1)).ParamName);
    }

    [Fact]
    public void A_lease_AsSpan_names_the_length_when_the_start_is_inside()
    {
        using var array = new SafeArray<int>(10);
        Assert.Equal("start", Assert.Throws<ArgumentOutOfRangeException>(() => { using var lease = array.Lease(); _ = lease.AsSpan(-1, 1); }).ParamName);
        Assert.Equal("start", Assert.Throws<ArgumentOutOfRangeException>(() => { using var lease = array.Lease(); _ = lease.AsSpan(11, 0); }).ParamName);
        Assert.Equal("length", Assert.Throws<ArgumentOutOfRangeException>(() => { using var lease = array.Lease(); _ = lease.AsSpan(8, 3); }).ParamName);
        Assert.Equal("length", Assert.Throws<ArgumentOutOfRangeException>(() => { using var lease = array.Lease(); _ = lease.AsSpan(0, -1); }).ParamName);
    }

    [Fact]
    public void ColumnScan_FindInRange_names_the_count_when_the_start_is_inside()
    {
        using var column = new HugeArray<double>(100);
        int[] matches = new int[200];
        Assert.Equal("start", Assert.Throws<ArgumentOutOfRangeException>(() => ColumnScan.FindInRange(column, -1, 1, 0, 1, matches)).ParamName);
        Assert.Equal("start", Assert.Throws<ArgumentOutOfRangeException>(() => ColumnScan.FindInRange(column, 101, 0, 0, 1, matches)).ParamName);
        Assert.Equal("count", Assert.Throws<ArgumentOutOfRangeException>(() => ColumnScan.FindInRange(column, 50, 51, 0, 1, matches)).ParamName);
        Assert.Equal("count", Assert.Throws<ArgumentOutOfRangeException>(() => ColumnScan.FindInRange(column, 0, -1, 0, 1, matches)).ParamName);
    }

    [Fact]
    public void Messages_name_the_arrays_as_users_write_them_not_with_the_runtime_s_generic_arity()
    {
        var array = new SafeArray<int>(4);
        array.Acquire();
        InvalidOperationException inUse = Assert.Throws<InvalidOperationException>(array.Dispose);
        Assert.Contains("This SafeArray cannot be disposed", inUse.Message, StringComparison.Ordinal);
        array.Release();
        using (MemoryLease<int> lease = array.Lease())
        {
            Assert.Contains("This SafeArray cannot be disposed", Assert.Throws<InvalidOperationException>(array.Dispose).Message, StringComparison.Ordinal);
        }

        array.Dispose();
        Assert.Equal("SafeArray", Assert.Throws<ObjectDisposedException>(() => array[0]).ObjectName);
        Assert.Equal("SafeArray", Assert.Throws<ObjectDisposedException>(array.Acquire).ObjectName);

        using var live = new HugeArray<double>(4);
        IndexOutOfRangeException outside = Assert.Throws<IndexOutOfRangeException>(() => live[4]);
        Assert.DoesNotContain("`", outside.Message, StringComparison.Ordinal);
        var huge = new HugeArray<double>(4);
        huge.Dispose();
        Assert.Equal("HugeArray", Assert.Throws<ObjectDisposedException>(() => huge.VectorSum()).ObjectName);
        Assert.Equal("HugeArray", Assert.Throws<ObjectDisposedException>(() => huge[0]).ObjectName);
        Assert.Equal("HugeArray", Assert.Throws<ObjectDisposedException>(() => huge.Fill(1)).ObjectName);
    }
}
