using jemalloc.Tests.Support;

namespace jemalloc.Tests.IO;

/// <summary>
/// <c>CopyTo</c> of a <see cref="NativeMemoryStream"/> into itself does what <see cref="MemoryStream"/>'s
/// does: the bytes from the position to the end, as they were, appended at the end (growing the
/// stream, past one chunk too), or, past a fixed capacity, <see cref="NotSupportedException"/> before
/// anything is written.
/// </summary>
[Collection(LeakChecked.Name)]
public sealed class NativeMemoryStreamCopyToSelfTests : LeakCheckedTest
{
    [Theory]
    [InlineData(200, 0, false)]
    [InlineData(200, 50, false)]
    [InlineData(200, 200, false)]
    [InlineData(200, 250, false)]
    [InlineData(100_000, 0, false)]
    [InlineData(100_000, 30_000, false)]
    [InlineData(100_000, 0, true)]
    [InlineData(200, 50, true)]
    public async Task CopyTo_into_itself_appends_what_was_there_as_MemoryStream_does(int length, int position, bool async)
    {
        // Past the default chunk (81,920 bytes) too: the copy reads the bytes as they were, not the ones its
        // first chunks appended.
        byte[] data = Enumerable.Range(0, length).Select(i => (byte)(i * 7 + 1)).ToArray();
        using var native = new NativeMemoryStream();
        var managed = new MemoryStream();
        native.Write(data);
        managed.Write(data);
        native.Position = position;
        managed.Position = position;

        if (async)
        {
            await native.CopyToAsync(native);
            await managed.CopyToAsync(managed);
        }
        else
        {
            native.CopyTo(native);
            managed.CopyTo(managed);
        }

        Assert.Equal(managed.ToArray(), native.ToArray());
        Assert.Equal(managed.Position, native.Position);
        Assert.Equal(managed.Length, native.Length);
    }

    [Fact]
    public void CopyTo_into_itself_past_a_fixed_capacity_throws_before_writing_as_MemoryStream_does()
    {
        using var array = new SafeArray<byte>(150_000);
        using var native = new NativeMemoryStream(array, leaveOpen: true);
        var managed = new MemoryStream(new byte[150_000]);
        native.SetLength(100_000);
        managed.SetLength(100_000);

        Assert.Throws<NotSupportedException>(() => native.CopyTo(native));
        Assert.Throws<NotSupportedException>(() => managed.CopyTo(managed));

        Assert.Equal(managed.Length, native.Length);
        Assert.Equal(managed.Position, native.Position);
        Assert.Equal(managed.ToArray(), native.ToArray());
    }
}
