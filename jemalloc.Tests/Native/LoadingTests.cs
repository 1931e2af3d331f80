namespace jemalloc.Tests.Native;

/// <summary>Loading errors need a process that has not loaded jemalloc yet: each test starts one.</summary>
public class LoadingTests
{
    [Fact]
    public void A_missing_library_gives_one_clear_exception_naming_the_path_and_how_to_build_it()
    {
        string missing = Path.Combine(Path.GetTempPath(), $"jemalloc-net-missing-{Guid.NewGuid():N}", "libjemallocnet.so");
        ChildProcessRunner.Result result = ChildProcessRunner.RunHelper(
            new Dictionary<string, string?> { ["JEMALLOC_NET_LIBRARY"] = missing }, "load");

        Assert.True(result.ExitCode == 0, result.ToString());
        Assert.StartsWith(nameof(JemLibraryException), result.Output, StringComparison.Ordinal);
        Assert.Contains(missing, result.Output, StringComparison.Ordinal);
        Assert.Contains("JEMALLOC_NET_LIBRARY does not exist", result.Output, StringComparison.Ordinal);
        Assert.Contains("./build.sh", result.Output, StringComparison.Ordinal);
    }

    [Fact]
    public void A_jemalloc_without_the_je_prefix_is_refused_with_its_path()
    {
        string directory = Directory.CreateTempSubdirectory("jemalloc-net-unprefixed-").FullName;
        try
        {
            // A stand-in for a system libjemalloc.so.2: unprefixed exports, no je_ symbols.
            string source = Path.Combine(directory, "unprefixed.c");
            File.WriteAllText(source, """
                #include <stddef.h>
                void *malloc(size_t size);
                void *mallocx(size_t size, int flags) { return malloc(size); }
                int mallctl(const char *name, void *oldp, size_t *oldlenp, void *newp, size_t newlen) { return 2; }
                """);
            string library = Path.Combine(directory, "libjemalloc.so.2");
            ChildProcessRunner.Result compile = ChildProcessRunner.Run(
                "gcc", ["-shared", "-fPIC", "-o", library, source], new Dictionary<string, string?>(), directory, TimeSpan.FromMinutes(1));
            Assert.True(compile.ExitCode == 0, "gcc (needed by build.sh too) could not build the stand-in library: " + compile);

            ChildProcessRunner.Result result = ChildProcessRunner.RunHelper(
                new Dictionary<string, string?> { ["JEMALLOC_NET_LIBRARY"] = library }, "load");
            Assert.True(result.ExitCode == 0, result.ToString());
            Assert.StartsWith(nameof(JemLibraryException), result.Output, StringComparison.Ordinal);
            Assert.Contains($"'{library}' is not a jemalloc built with the je_ prefix", result.Output, StringComparison.Ordinal);
            Assert.Contains("je_mallocx", result.Output, StringComparison.Ordinal);
        }
        finally
        {
            Directory.Delete(directory, recursive: true);
        }
    }

    [Fact]
    public void The_environment_variable_selects_another_build()
    {
        string directory = Directory.CreateTempSubdirectory("jemalloc-net-copy-").FullName;
        try
        {
            string copy = Path.Combine(directory, "libjemallocnet.so");
            File.Copy(Path.Combine(AppContext.BaseDirectory, "libjemallocnet.so"), copy);
            ChildProcessRunner.Result result = ChildProcessRunner.RunHelper(
                new Dictionary<string, string?> { ["JEMALLOC_NET_LIBRARY"] = copy }, "load");
            Assert.True(result.ExitCode == 0, result.ToString());
            Assert.Equal($"LOADED {copy}", result.Output.Trim());
        }
        finally
        {
            Directory.Delete(directory, recursive: true);
        }
    }

    [Fact]
    public void SetNativeLibraryPath_selects_another_build_and_wins_over_the_environment_variable()
    {
        string directory = Directory.CreateTempSubdirectory("jemalloc-net-explicit-").FullName;
        try
        {
            string copy = Path.Combine(directory, "libjemallocnet.so");
            File.Copy(Path.Combine(AppContext.BaseDirectory, "libjemallocnet.so"), copy);
            ChildProcessRunner.Result result = ChildProcessRunner.RunHelper(
                new Dictionary<string, string?> { ["JEMALLOC_NET_LIBRARY"] = "/nonexistent/libjemallocnet.so" }, "load-from", copy);
            Assert.True(result.ExitCode == 0, result.ToString());
            Assert.Equal($"LOADED {copy}", result.Output.Trim());

            ChildProcessRunner.Result missing = ChildProcessRunner.RunHelper(
                new Dictionary<string, string?>(), "load-from", Path.Combine(directory, "absent.so"));
            Assert.Contains("Jem.SetNativeLibraryPath does not exist", missing.Output, StringComparison.Ordinal);
        }
        finally
        {
            Directory.Delete(directory, recursive: true);
        }
    }

    [Fact]
    public void By_default_the_library_next_to_the_application_is_loaded()
    {
        ChildProcessRunner.Result result = ChildProcessRunner.RunHelper(new Dictionary<string, string?>(), "load");
        Assert.True(result.ExitCode == 0, result.ToString());
        Assert.StartsWith("LOADED ", result.Output, StringComparison.Ordinal);
        Assert.Empty(result.Error);
    }
}
