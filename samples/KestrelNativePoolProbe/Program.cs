// Kestrel 10 takes the memory pools of its socket transport from the IMemoryPoolFactory<byte>
// registered last in dependency injection. This probe registers one that makes JemMemoryPools and
// echoes two bodies: a small one, whose response goes out as one buffer, and a 64 KiB one, whose
// response spans several pool blocks. The second fails: the transport sends several buffers with
// SocketAsyncEventArgs.BufferList, which takes only managed arrays, and it throws
// "Buffer backed by array was expected" for any block that is not one (SocketSender.SetBufferList ->
// BufferExtensions.GetArray in Microsoft.AspNetCore.Server.Kestrel.Transport.Sockets). So native
// memory cannot be Kestrel's pool: the probe prints what happened and exits 0 when that is still so.
using System.Buffers;
using System.Net;
using jemalloc;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

var factory = new JemPoolFactory();
WebApplicationBuilder builder = WebApplication.CreateSlimBuilder(args);
builder.Logging.ClearProviders();
builder.WebHost.UseKestrel(options => options.Listen(IPAddress.Loopback, 0));
builder.Services.AddSingleton<IMemoryPoolFactory<byte>>(factory);
WebApplication app = builder.Build();
app.Run(async context =>
{
    context.Response.ContentLength = context.Request.ContentLength;
    await context.Request.Body.CopyToAsync(context.Response.Body, context.RequestAborted);
});
await app.StartAsync();
string address = app.Services.GetRequiredService<IServer>().Features.GetRequiredFeature<IServerAddressesFeature>().Addresses.Single();
Console.WriteLine($"Kestrel on {address} created {factory.Pools.Count} JemMemoryPool(s) through IMemoryPoolFactory<byte>.");

using var client = new HttpClient { BaseAddress = new Uri(address), Timeout = TimeSpan.FromSeconds(10) };
bool smallEchoed = await Echo(client, 100);
long rented = factory.Pools.Sum(pool => pool.GetStatistics().RentCount);
Console.WriteLine($"100-byte echo: {(smallEchoed ? "intact" : "FAILED")}; the pools rented {rented} block(s).");
bool largeEchoed = await Echo(client, 64 << 10);
Console.WriteLine($"64 KiB echo: {(largeEchoed ? "intact" : "failed (the server reset the connection)")}.");
await app.StopAsync();

bool stillArrayOnly = smallEchoed && rented > 0 && !largeEchoed;
Console.WriteLine(stillArrayOnly
    ? "As expected: Kestrel uses the native pool, but its socket transport cannot send several native blocks at once."
    : "Kestrel's behaviour changed: review whether JemMemoryPool can now serve as its pool.");
return stillArrayOnly ? 0 : 1;

static async Task<bool> Echo(HttpClient client, int length)
{
    byte[] body = new byte[length];
    new Random(length).NextBytes(body);
    try
    {
        using HttpResponseMessage response = await client.PostAsync(new Uri("/", UriKind.Relative), new ByteArrayContent(body));
        byte[] echoed = await response.Content.ReadAsByteArrayAsync();
        return body.AsSpan().SequenceEqual(echoed);
    }
    catch (HttpRequestException)
    {
        return false;
    }
}

/// <summary>Makes a <see cref="JemMemoryPool"/> for each pool Kestrel asks for, and keeps them for their statistics.</summary>
internal sealed class JemPoolFactory : IMemoryPoolFactory<byte>
{
    private readonly List<JemMemoryPool> _pools = [];

    public IReadOnlyList<JemMemoryPool> Pools
    {
        get
        {
            lock (_pools)
            {
                return [.. _pools];
            }
        }
    }

    public MemoryPool<byte> Create(MemoryPoolOptions? options = null)
    {
        var pool = new JemMemoryPool();
        lock (_pools)
        {
            _pools.Add(pool);
        }

        return pool;
    }
}
