using System.Text.Json;

namespace jemalloc.Arrow.Tests;

/// <summary>Runs arrow-check.js under Node with the apache-arrow package ./build.sh installs into artifacts/node.</summary>
internal static class NodeArrow
{
    private static readonly TimeSpan Timeout = TimeSpan.FromMinutes(2);
    private static readonly JsonSerializerOptions JsonOptions = new() { PropertyNameCaseInsensitive = true };

    /// <summary>The node_modules folder holding apache-arrow: JEMALLOC_NET_NODE_MODULES, else artifacts/node/node_modules above the test assembly.</summary>
    private static string ModulesFolder()
    {
        string? configured = Environment.GetEnvironmentVariable("JEMALLOC_NET_NODE_MODULES");
        if (!string.IsNullOrEmpty(configured))
        {
            return configured;
        }

        for (DirectoryInfo? folder = new(AppContext.BaseDirectory); folder is not null; folder = folder.Parent)
        {
            string candidate = Path.Combine(folder.FullName, "artifacts", "node", "node_modules");
            if (Directory.Exists(Path.Combine(candidate, "apache-arrow")))
            {
                return candidate;
            }
        }

        throw new InvalidOperationException("apache-arrow for Node is not installed: ./build.sh test installs it into artifacts/node (or set JEMALLOC_NET_NODE_MODULES to a node_modules folder that has it).");
    }

    /// <summary>Runs the script; fails the test if Node fails or does not finish in time. Returns its standard output.</summary>
    internal static string Run(params string[] arguments) => RunScript("arrow-check.js", arguments);

    /// <summary>Runs one of the test scripts copied beside the test assembly; fails the test if Node fails or does not finish in time.</summary>
    internal static string RunScript(string script, params string[] arguments)
    {
        (int exitCode, string output, string error) = ExternalProcess.Run(
            "node",
            [Path.Combine(AppContext.BaseDirectory, script), .. arguments],
            Timeout,
            new Dictionary<string, string> { ["NODE_PATH"] = ModulesFolder() });
        Assert.True(exitCode == 0, $"node exited with {exitCode}: {error}");
        return output;
    }

    /// <summary>Node's reading of an IPC file or stream: per column, its type, length, null count and sum.</summary>
    internal static Dictionary<string, ColumnSummary> Read(string path)
    {
        string json = Run("read", path);
        return JsonSerializer.Deserialize<Dictionary<string, ColumnSummary>>(json, JsonOptions)
            ?? throw new InvalidOperationException($"node printed no JSON: {json}");
    }

    /// <summary>Node's reading of an IPC file or stream: per column, its type, null count and every value as text (a decimal's unscaled integer, a binary value's hex).</summary>
    internal static Dictionary<string, ColumnValues> Values(string path)
    {
        string json = Run("values", path);
        return JsonSerializer.Deserialize<Dictionary<string, ColumnValues>>(json, JsonOptions)
            ?? throw new InvalidOperationException($"node printed no JSON: {json}");
    }

    internal sealed record ColumnSummary(string Type, long Length, long Nulls, string Sum);

    internal sealed record ColumnValues(string Type, long Nulls, string?[] Values);

    /// <summary>Node's reading of the string and binary columns of an IPC file or stream (arrow-strings.js).</summary>
    internal static Dictionary<string, StringSummary> ReadStrings(string path)
    {
        string json = RunScript("arrow-strings.js", "read", path);
        return JsonSerializer.Deserialize<Dictionary<string, StringSummary>>(json, JsonOptions)
            ?? throw new InvalidOperationException($"node printed no JSON: {json}");
    }

    /// <summary>A string column as arrow-strings.js sums it up: type, length, nulls, UTF-8 bytes of the valid values, and their FNV-1a hash in row order.</summary>
    internal sealed record StringSummary(string Type, long Length, long Nulls, long Bytes, string Hash)
    {
        /// <summary>The same summary computed here, from values in row order (null for a null row).</summary>
        internal static (long Bytes, string Hash) Of(IEnumerable<byte[]?> values)
        {
            uint hash = 2166136261;
            long bytes = 0;
            foreach (byte[]? value in values)
            {
                if (value is null)
                {
                    hash = Fnv(hash, 0x100);
                    continue;
                }

                foreach (byte b in value)
                {
                    hash = Fnv(hash, b);
                }

                hash = Fnv(hash, 0x1FF);
                bytes += value.Length;
            }

            return (bytes, hash.ToString(System.Globalization.CultureInfo.InvariantCulture));
        }

        private static uint Fnv(uint hash, uint value) => unchecked((hash ^ value) * 16777619);
    }
}
