using System.IO.Compression;
using System.Reflection;
using jemalloc.Tests.Support;

namespace jemalloc.Tests.Package;

/// <summary>
/// Packs jemalloc.NET, then builds and runs samples/PackageConsumer against the package from a local
/// folder (a package reference, not a project reference), as a user's application would.
/// </summary>
public class PackageTests
{
    private static readonly TimeSpan StepTimeout = TimeSpan.FromMinutes(5);

    [RequiresDotnetSdkFact]
    public void The_packed_package_works_in_a_separate_application()
    {
        string root = RepositoryPaths.Root;
        string configuration = typeof(Jem).Assembly.GetCustomAttribute<AssemblyConfigurationAttribute>()?.Configuration ?? "Release";
        string work = Directory.CreateTempSubdirectory("jemalloc-net-package-").FullName;
        try
        {
            // The same layout as the repository, so the sample's own nuget.config (../../artifacts/packages) is what is tested.
            string packages = Path.Combine(work, "artifacts", "packages");
            string sample = Path.Combine(work, "samples", "PackageConsumer");
            CopyDirectory(Path.Combine(root, "samples"), Path.Combine(work, "samples"));

            // A version of its own, so no copy cached by an earlier restore can stand in for this build.
            string version = $"0.0.0-packagetest.{DateTime.UtcNow:yyyyMMddHHmmss}.{Environment.ProcessId}";
            Dotnet(root, "pack", Path.Combine(root, "jemalloc.Api", "jemalloc.Api.csproj"), "-c", configuration, "--no-build",
                "-o", packages, $"-p:PackageVersion={version}");

            string package = Path.Combine(packages, $"jemalloc.NET.{version}.nupkg");
            Assert.True(File.Exists(Path.Combine(packages, $"jemalloc.NET.{version}.snupkg")), "no symbol package");
            using (ZipArchive archive = ZipFile.OpenRead(package))
            {
                string[] entries = archive.Entries.Select(entry => entry.FullName).ToArray();
                Assert.Contains("lib/net10.0/jemalloc.Api.dll", entries);
                Assert.Contains("lib/net10.0/jemalloc.Api.xml", entries);
                // One package for every supported platform.
                Assert.Contains("runtimes/linux-x64/native/libjemallocnet.so", entries);
                Assert.Contains("runtimes/linux-arm64/native/libjemallocnet.so", entries);
                Assert.Contains("runtimes/win-x64/native/jemallocnet.dll", entries);
                Assert.Contains("README.md", entries);
                Assert.Contains("LICENSE", entries);
            }

            // Restore into a private folder; packages the repository already restored are reused from the usual cache.
            string globalPackages = Environment.GetEnvironmentVariable("NUGET_PACKAGES")
                ?? Path.Combine(Environment.GetFolderPath(Environment.SpecialFolder.UserProfile), ".nuget", "packages");
            Dotnet(sample, "build", "-c", "Release", $"-p:JemallocNetVersion={version}",
                $"-p:RestorePackagesPath={Path.Combine(work, "restored")}", $"-p:RestoreFallbackFolders={globalPackages}");

            string output = Path.Combine(sample, "bin", "Release", "net10.0");
            Assert.True(File.Exists(Path.Combine(output, "runtimes", "linux-x64", "native", "libjemallocnet.so")),
                "the native library did not arrive in the application's output");
            Assert.True(Directory.Exists(Path.Combine(work, "restored", "jemalloc.net", version)), "the package was not restored from the local folder");
            Assert.True(File.Exists(Path.Combine(output, "jemalloc.Api.dll")));

            ChildProcessRunner.Result run = ChildProcessRunner.Run(
                ChildProcessRunner.DotnetHost, ["exec", Path.Combine(output, "PackageConsumer.dll")], CleanEnvironment(), output, StepTimeout);
            Assert.True(run.ExitCode == 0, run.ToString());
            Assert.Contains("jemalloc 5.3.0-", run.Output, StringComparison.Ordinal);
            Assert.EndsWith("OK", run.Output.TrimEnd(), StringComparison.Ordinal);
        }
        finally
        {
            Directory.Delete(work, recursive: true);
        }
    }

    private static void Dotnet(string workingDirectory, params string[] arguments)
    {
        // No build servers or reusable nodes: nothing may outlive the test.
        string[] all = [.. arguments, "--nologo", "-nodeReuse:false", "--disable-build-servers"];
        ChildProcessRunner.Result result = ChildProcessRunner.Run(ChildProcessRunner.DotnetHost, all, CleanEnvironment(), workingDirectory, StepTimeout);
        Assert.True(result.ExitCode == 0, $"dotnet {string.Join(' ', all)} failed:{Environment.NewLine}{result}");
    }

    /// <summary>The test host's MSBuild variables would point a nested build at the wrong SDK pieces.</summary>
    private static Dictionary<string, string?> CleanEnvironment()
    {
        var environment = new Dictionary<string, string?>
        {
            ["DOTNET_CLI_TELEMETRY_OPTOUT"] = "1",
            ["DOTNET_NOLOGO"] = "1",
            ["DOTNET_SKIP_FIRST_TIME_EXPERIENCE"] = "1",
        };
        foreach (string name in Environment.GetEnvironmentVariables().Keys.Cast<string>())
        {
            if (name.StartsWith("MSBUILD", StringComparison.OrdinalIgnoreCase) || name.StartsWith("VSTEST", StringComparison.OrdinalIgnoreCase))
            {
                environment[name] = null;
            }
        }

        return environment;
    }


    private static void CopyDirectory(string source, string destination)
    {
        foreach (string file in Directory.EnumerateFiles(source, "*", SearchOption.AllDirectories))
        {
            string relative = Path.GetRelativePath(source, file);
            if (relative.Split(Path.DirectorySeparatorChar).Any(part => part is "bin" or "obj"))
            {
                continue;
            }

            string target = Path.Combine(destination, relative);
            Directory.CreateDirectory(Path.GetDirectoryName(target)!);
            File.Copy(file, target);
        }
    }
}
