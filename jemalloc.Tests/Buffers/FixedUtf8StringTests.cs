using System.Runtime.InteropServices;
using System.Text;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.Buffers;

[Collection(LeakChecked.Name)]
public sealed unsafe class FixedUtf8StringTests : LeakCheckedTest
{
    [Theory]
    [InlineData("")]
    [InlineData("hello")]
    [InlineData("héllo wörld")]
    [InlineData("日本語テキスト")]
    [InlineData("emoji 😀 and 𝄞")]
    public void Round_trips_a_string_with_its_utf8_length(string text)
    {
        var s = new FixedUtf8String(text);
        Assert.Equal(text, s.ToString());
        Assert.Equal(Encoding.UTF8.GetByteCount(text), s.Length);
        Assert.Equal(Encoding.UTF8.GetBytes(text), s.ToArray());
        Assert.True(s.IsValid);
        s.Free();
    }

    [Fact]
    public void Pointer_is_a_zero_terminated_c_string()
    {
        var s = new FixedUtf8String("abc");
        Assert.Equal("abc", Marshal.PtrToStringUTF8(s.Pointer));
        Assert.Equal(0, ((byte*)s.Pointer)[3]);
        AllocationInfo info = Assert.Single(AllocationLedger.Snapshot(), i => i.Address == s.Pointer);
        Assert.Equal((nuint)4, info.Size);
        s.Free();
    }

    [Fact]
    public void Builds_from_valid_utf8_bytes()
    {
        byte[] bytes = Encoding.UTF8.GetBytes("größe");
        var fromArray = new FixedUtf8String(bytes);
        var fromSpan = new FixedUtf8String(bytes.AsSpan(0, 4));
        Assert.Equal("größe", fromArray.ToString());
        Assert.Equal("gr\u00f6", fromSpan.ToString());
        fromArray.Free();
        fromSpan.Free();
    }

    [Theory]
    [InlineData(new byte[] { 0x61, 0x62, 0xFF }, 2)]
    [InlineData(new byte[] { 0xC3 }, 0)]
    [InlineData(new byte[] { 0x61, 0xC3, 0x28 }, 1)]
    [InlineData(new byte[] { 0x61, 0x62, 0x63, 0xED, 0xA0, 0x80 }, 3)]
    [InlineData(new byte[] { 0xC0, 0xAF }, 0)]
    public void Invalid_utf8_is_rejected_naming_the_byte_offset(byte[] bytes, int offset)
    {
        long liveCount = AllocationLedger.LiveCount;
        var error = Assert.Throws<ArgumentException>(() => new FixedUtf8String(bytes));
        Assert.Contains($"byte offset {offset}", error.Message, StringComparison.Ordinal);
        Assert.Equal("utf8", error.ParamName);
        Assert.Equal(liveCount, AllocationLedger.LiveCount);
    }

    [Fact]
    public void String_with_an_unpaired_surrogate_is_rejected_naming_the_index()
    {
        var error = Assert.Throws<ArgumentException>(() => new FixedUtf8String("ab\uD800c"));
        Assert.Contains("index 2", error.Message, StringComparison.Ordinal);
        Assert.Throws<ArgumentNullException>(() => new FixedUtf8String((string)null!));
        Assert.Throws<ArgumentNullException>(() => new FixedUtf8String((byte[])null!));
    }

    [Fact]
    public void Equality_with_itself_and_with_string()
    {
        var a = new FixedUtf8String("Gavial");
        var b = new FixedUtf8String("Gavial");
        var c = new FixedUtf8String("Gavia");
        FixedUtf8String copy = a;

        Assert.True(a == b);
        Assert.True(a.Equals(b));
        Assert.True(a.Equals((object)b));
        Assert.Equal(a.GetHashCode(), b.GetHashCode());
        Assert.True(a != c);
        Assert.True(a == copy);
        Assert.True(a == "Gavial");
        Assert.True("Gavial" == a);
        Assert.True(a != "gavial");
        Assert.True("Gavia" != a);
        Assert.False(a.Equals((string?)null));
        Assert.False(a.Equals("Gavial\uD800"));
        Assert.False(a.Equals("not the same length at all"));
        Assert.False(a.Equals((object)"Gavial"));
        a.Free();
        b.Free();
        c.Free();
    }

    [Fact]
    public void Ordinal_comparison_is_by_code_point()
    {
        var apple = new FixedUtf8String("apple");
        var banana = new FixedUtf8String("banana");
        var app = new FixedUtf8String("app");
        var accented = new FixedUtf8String("é");
        var z = new FixedUtf8String("z");

        Assert.Equal(-1, apple.CompareTo(banana));
        Assert.Equal(1, banana.CompareTo(apple));
        Assert.Equal(1, apple.CompareTo(app));
        Assert.Equal(0, apple.CompareTo(apple));
        Assert.True(z < accented);
        Assert.True(apple <= banana);
        Assert.True(banana > app);
        Assert.True(banana >= apple);
        foreach (var s in new[] { apple, banana, app, accented, z })
        {
            s.Free();
        }
    }

    [Fact]
    public void Searching_returns_byte_offsets()
    {
        var s = new FixedUtf8String("héllo héllo");
        var needle = new FixedUtf8String("llo");

        Assert.Equal(3, s.IndexOf("llo"));
        Assert.Equal(10, s.LastIndexOf("llo"));
        Assert.Equal(3, s.IndexOf(needle));
        Assert.Equal(10, s.LastIndexOf(needle));
        Assert.Equal(1, s.IndexOf('é'));
        Assert.Equal(8, s.LastIndexOf('é'));
        Assert.Equal(-1, s.IndexOf('x'));
        Assert.Equal(-1, s.LastIndexOf('x'));
        Assert.Equal(-1, s.IndexOf('\uD800'));
        Assert.Equal(-1, s.LastIndexOf('\uDC00'));
        Assert.Equal(-1, s.IndexOf("xyz"));
        Assert.Equal(-1, s.IndexOf("\uD800"));
        Assert.Equal(0, s.IndexOf(""));
        Assert.Throws<ArgumentNullException>(() => s.IndexOf((string)null!));
        Assert.Throws<ArgumentNullException>(() => s.LastIndexOf((string)null!));
        Assert.Equal(-1, s.IndexOf(new string('x', 500)));
        s.Free();
        needle.Free();
    }

    [Fact]
    public void StartsWith_and_EndsWith()
    {
        var s = new FixedUtf8String("Buxarinovich-1a2b");
        var prefix = new FixedUtf8String("Buxa");
        var suffix = new FixedUtf8String("2b");

        Assert.True(s.StartsWith("Buxarinovich"));
        Assert.False(s.StartsWith("uxa"));
        Assert.True(s.StartsWith(prefix));
        Assert.False(s.StartsWith(suffix));
        Assert.True(s.EndsWith("-1a2b"));
        Assert.False(s.EndsWith("1a2"));
        Assert.True(s.EndsWith(suffix));
        Assert.False(s.EndsWith(prefix));
        Assert.Throws<ArgumentNullException>(() => s.StartsWith((string)null!));
        Assert.Throws<ArgumentNullException>(() => s.EndsWith((string)null!));
        s.Free();
        prefix.Free();
        suffix.Free();
    }

    [Fact]
    public void Substring_copies_into_new_memory_and_refuses_to_cut_a_character()
    {
        var s = new FixedUtf8String("naïve text");
        var tail = s.Substring(7);
        var middle = s.Substring(2, 3);

        Assert.Equal("text", tail.ToString());
        Assert.Equal("ïv", middle.ToString());
        Assert.NotEqual(s.Pointer, middle.Pointer);
        var error = Assert.Throws<ArgumentException>(() => s.Substring(3, 2));
        Assert.Contains("cuts a multi-byte", error.Message, StringComparison.Ordinal);
        Assert.Throws<ArgumentOutOfRangeException>(() => s.Substring(5, 10));
        Assert.Throws<ArgumentOutOfRangeException>(() => s.Substring(-1));
        var empty = s.Substring(11);
        Assert.Equal("", empty.ToString());
        empty.Free();

        s.Free();
        Assert.Equal("text", tail.ToString());
        tail.Free();
        middle.Free();
    }

    [Fact]
    public void Copies_share_validity_and_every_use_after_free_throws()
    {
        var s = new FixedUtf8String("shared");
        FixedUtf8String copy = s;
        var other = new FixedUtf8String("other");
        copy.Free();

        Assert.False(s.IsValid);
        DisposedMessages.AssertFreed("FixedUtf8String", () => s.ToString());
        DisposedMessages.AssertFreed("FixedUtf8String", () => s.ToArray());
        DisposedMessages.AssertFreed("FixedUtf8String", () => s.Lease().Dispose());
        DisposedMessages.AssertFreed("FixedUtf8String", () => s.Pointer);
        DisposedMessages.AssertFreed("FixedUtf8String", () => s.GetHashCode());
        DisposedMessages.AssertFreed("FixedUtf8String", () => s == other);
        DisposedMessages.AssertFreed("FixedUtf8String", () => s == "shared");
        DisposedMessages.AssertFreed("FixedUtf8String", () => s.CompareTo(other));
        DisposedMessages.AssertFreed("FixedUtf8String", () => s.IndexOf("h"));
        DisposedMessages.AssertFreed("FixedUtf8String", () => s.IndexOf('h'));
        DisposedMessages.AssertFreed("FixedUtf8String", () => s.LastIndexOf(other));
        DisposedMessages.AssertFreed("FixedUtf8String", () => s.StartsWith("s"));
        DisposedMessages.AssertFreed("FixedUtf8String", () => s.EndsWith(other));
        DisposedMessages.AssertFreed("FixedUtf8String", () => s.Substring(1));
        DisposedMessages.AssertFreed("FixedUtf8String", s.Acquire);
        DisposedMessages.AssertFreed("FixedUtf8String", s.Release);
        DisposedMessages.AssertFreed("FixedUtf8String", s.Free);
        DisposedMessages.AssertFreed("FixedUtf8String", () => other.IndexOf(s));
        Assert.True(s == copy);
        other.Free();
    }

    [Fact]
    public void Free_while_acquired_throws()
    {
        var s = new FixedUtf8String("held");
        s.Acquire();
        Assert.Throws<InvalidOperationException>(s.Free);
        Assert.Equal("held", s.ToString());
        s.Release();
        Assert.Throws<InvalidOperationException>(s.Release);
        s.Free();
    }

    [Fact]
    public void Default_reads_as_the_empty_string_and_owns_nothing()
    {
        FixedUtf8String s = default;
        var empty = new FixedUtf8String("");
        Assert.Equal(0, s.Length);
        Assert.False(s.IsValid);
        Assert.Equal("", s.ToString());
        Assert.True(s == "");
        Assert.True(s == empty);
        Assert.Equal(empty.GetHashCode(), s.GetHashCode());
        Assert.Empty(s.ToArray());
        byte[] destination = [7];
        s.CopyTo(destination);
        Assert.Equal([7], destination);
        using (ReadOnlyMemoryLease<byte> lease = s.Lease())
        {
            Assert.Equal(0, lease.Length);
        }

        Assert.Throws<ObjectDisposedException>(s.Free);
        Assert.Throws<ObjectDisposedException>(() => s.Pointer);
        empty.Free();
    }

    [Theory]
    [InlineData("shared")]
    [InlineData("")]
    public void A_lease_used_after_its_Dispose_says_it_ended_and_the_string_stays_live(string text)
    {
        var s = new FixedUtf8String(text);
        ReadOnlyMemoryLease<byte> lease = s.Lease();
        ReadOnlyMemoryLease<byte> copy = lease;
        copy.Dispose();
        Assert.False(lease.IsOpen);

        ObjectDisposedException? spanError = null;
        try
        {
            _ = lease.Span.Length;
        }
        catch (ObjectDisposedException e)
        {
            spanError = e;
        }

        ObjectDisposedException? pointerError = null;
        try
        {
            _ = lease.Pointer;
        }
        catch (ObjectDisposedException e)
        {
            pointerError = e;
        }

        // The message names the lease the caller holds, not the MemoryLease inside it.
        DisposedMessages.SaysEnded(spanError, "ReadOnlyMemoryLease", "This ReadOnlyMemoryLease<Byte>");
        DisposedMessages.SaysEnded(pointerError, "ReadOnlyMemoryLease", "This ReadOnlyMemoryLease<Byte>");
        Assert.True(s.IsValid);
        Assert.Equal(text, s.ToString());
        s.Free();
    }
}
