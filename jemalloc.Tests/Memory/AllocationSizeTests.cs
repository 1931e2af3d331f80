using System.Runtime.CompilerServices;
using jemalloc.Memory;

namespace jemalloc.Tests.Memory;

/// <summary>The one element-count-to-bytes conversion every structure, the writer and the huge-page default use.</summary>
public sealed class AllocationSizeTests
{
    [Fact]
    public void The_size_is_the_count_times_the_element_size()
    {
        Assert.Equal((nuint)(3 * sizeof(long)), AllocationSize.Of<long>(3));
        Assert.Equal((nuint)Unsafe.SizeOf<Guid>() * 1000, AllocationSize.Of<Guid>(1000));
        Assert.Equal((nuint)0, AllocationSize.Of<byte>(0));
        Assert.Equal((nuint)nint.MaxValue, AllocationSize.Of<byte>(nint.MaxValue));
    }

    [Fact]
    public void A_size_past_the_address_space_or_a_negative_count_throws_overflow_naming_the_count()
    {
        long tooMany = (long)(nint.MaxValue / sizeof(long)) + 1;
        OverflowException overflow = Assert.Throws<OverflowException>(() => AllocationSize.Of<long>(tooMany));
        Assert.Contains(tooMany.ToString("N0", System.Globalization.CultureInfo.CurrentCulture), overflow.Message, StringComparison.Ordinal);
        Assert.Throws<OverflowException>(() => AllocationSize.Of<int>(-1));
        Assert.Throws<OverflowException>(() => AllocationSize.Of<int>(long.MinValue));
    }

    [Fact]
    public void A_structure_too_big_for_the_address_space_throws_overflow_before_any_allocation()
    {
        long tooMany = (long)(nint.MaxValue / sizeof(long)) + 1;
        Assert.Throws<OverflowException>(() => new HugeArray<long>(tooMany));
        Assert.Throws<OverflowException>(() => new HugeArray<long>(tooMany, 7L));
    }
}
