using jemalloc.Tests.Support;

namespace jemalloc.Tests.Buffers;

/// <summary>
/// <see langword="default"/> of <see cref="FixedBuffer{T}"/> and <see cref="FixedUtf8String"/> never had
/// memory: an operation that needs memory throws ObjectDisposedException (what their documentation
/// names) saying the value is default, not that it "has been freed".
/// </summary>
[Collection(LeakChecked.Name)]
public sealed class DefaultStructMessageTests : LeakCheckedTest
{
    public static TheoryData<string> FixedBufferOperations() =>
    [
        "Lease", "Fill", "CopyTo", "CopyFrom", "ToArray", "SequenceEqual", "Acquire", "Release", "Free",
        "ThrowIfInvalid", "Pointer", "VectorFill", "VectorSum", "VectorMin", "VectorAllLessThan",
    ];

    [Theory]
    [MemberData(nameof(FixedBufferOperations))]
    public void An_operation_on_a_default_FixedBuffer_says_it_is_default(string operation)
    {
        FixedBuffer<int> empty = default;
        Action act = operation switch
        {
            "Lease" => () => { using MemoryLease<int> lease = empty.Lease(); },
            "Fill" => () => empty.Fill(1),
            "CopyTo" => () => empty.CopyTo(new int[1]),
            "CopyFrom" => () => empty.CopyFrom([1]),
            "ToArray" => () => _ = empty.ToArray(),
            "SequenceEqual" => () => _ = empty.SequenceEqual([]),
            "Acquire" => empty.Acquire,
            "Release" => empty.Release,
            "Free" => empty.Free,
            "ThrowIfInvalid" => empty.ThrowIfInvalid,
            "Pointer" => () => _ = empty.Pointer,
            "VectorFill" => () => empty.VectorFill(1),
            "VectorSum" => () => _ = empty.VectorSum(),
            "VectorMin" => () => _ = empty.VectorMin(),
            "VectorAllLessThan" => () => _ = empty.VectorAllLessThan(1),
            _ => throw new ArgumentOutOfRangeException(nameof(operation)),
        };

        AssertSaysDefault(act, "FixedBuffer");
    }

    [Theory]
    [InlineData("Acquire")]
    [InlineData("Release")]
    [InlineData("Free")]
    [InlineData("Pointer")]
    public void An_operation_on_a_default_FixedUtf8String_says_it_is_default(string operation)
    {
        FixedUtf8String empty = default;
        Action act = operation switch
        {
            "Acquire" => empty.Acquire,
            "Release" => empty.Release,
            "Free" => empty.Free,
            "Pointer" => () => _ = empty.Pointer,
            _ => throw new ArgumentOutOfRangeException(nameof(operation)),
        };

        AssertSaysDefault(act, "FixedUtf8String");
    }

    [Fact]
    public void A_freed_FixedBuffer_still_says_it_has_been_freed()
    {
        var buffer = new FixedBuffer<int>(4);
        buffer.Free();
        ObjectDisposedException e = Assert.Throws<ObjectDisposedException>(() => buffer.Fill(1));
        Assert.Contains("has been freed", e.Message, StringComparison.Ordinal);
        e = Assert.Throws<ObjectDisposedException>(buffer.Free);
        Assert.Contains("has been freed", e.Message, StringComparison.Ordinal);
    }

    private static void AssertSaysDefault(Action act, string typeName)
    {
        ObjectDisposedException e = Assert.Throws<ObjectDisposedException>(act);
        Assert.Equal(typeName, e.ObjectName);
        Assert.Contains($"This {typeName} is default", e.Message, StringComparison.Ordinal);
        Assert.DoesNotContain("freed", e.Message, StringComparison.Ordinal);
    }
}
