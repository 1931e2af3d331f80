using System.Globalization;
using System.Net;
using System.Net.Sockets;
using Garnet;
using Garnet.common;

namespace jemalloc.Caching.Tests;

/// <summary>
/// A Garnet server hosted in the test process on 127.0.0.1, on a port free when it starts: the real
/// Redis-protocol engine the contract is checked against through RedisCache. One per test class.
/// </summary>
public sealed class GarnetServerFixture : IDisposable
{
    private readonly GarnetServer _server;

    public GarnetServerFixture()
    {
        // The free port is found by binding port 0 and letting it go; another process may take it
        // before Garnet binds it, so a failed start is tried again on another port.
        Exception? last = null;
        for (int attempt = 0; attempt < 5; attempt++)
        {
            int port = FreePort();
            GarnetServer? server = null;
            try
            {
                // -q: no banner; a hash index of 16 MiB rather than 128 (the tests hold thousands of keys, not millions).
                server = new GarnetServer(["--bind", "127.0.0.1", "--port", port.ToString(CultureInfo.InvariantCulture), "-q", "--index", "16m"]);
                server.Start();
                _server = server;
                Configuration = $"127.0.0.1:{port},abortConnect=false";
                return;
            }
            catch (Exception e) when (e is SocketException or IOException or InvalidOperationException or GarnetException)
            {
                server?.Dispose();
                last = e;
            }
        }

        throw new InvalidOperationException($"Garnet did not start on 127.0.0.1 in 5 attempts: {last?.Message}", last);
    }

    /// <summary>The StackExchange.Redis configuration string of the server.</summary>
    public string Configuration { get; }

    public void Dispose() => _server.Dispose();

    private static int FreePort()
    {
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        return ((IPEndPoint)listener.LocalEndpoint).Port;
    }
}
