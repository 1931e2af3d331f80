namespace jemalloc.Tests.Native;

public class InfoTests
{
    [Fact]
    public void Version_page_size_and_arena_count_are_jemallocs()
    {
        Assert.Equal("5.3.0-0-g54eaed1d8b56b1aa528be3bdd1877e59c56fa90c", Jem.Version);
        Assert.Equal((nuint)Environment.SystemPageSize, Jem.PageSize);
        Assert.True(Jem.ArenaCount >= MallctlKeys.Opt.Narenas.Get());
    }

    [Fact]
    public void The_build_configuration_is_read_from_config_keys()
    {
        JemBuildConfiguration build = Jem.BuildConfiguration;
        Assert.True(build.Stats);
        Assert.Equal(Jem.GetMallctl<bool>("config.debug"), build.Debug);
        Assert.Equal(Jem.GetMallctl<bool>("config.prof"), build.Prof);
        Assert.Equal(Jem.GetMallctl<bool>("config.fill"), build.Fill);
        Assert.Equal(Jem.GetMallctl<bool>("config.lazy_lock"), build.LazyLock);
        Assert.Equal(Jem.GetMallctl<bool>("config.utrace"), build.Utrace);
        Assert.Equal(Jem.GetMallctl<bool>("config.xmalloc"), build.Xmalloc);
        Assert.Equal(Jem.GetMallctlString("config.malloc_conf"), build.MallocConf);
        Assert.Contains("muzzy_decay_ms:-1", build.MallocConf, StringComparison.Ordinal);
    }

    [Fact]
    public void The_library_is_loaded_from_the_application_folder()
    {
        string loaded = Jem.Load();
        Assert.True(Jem.IsLoaded);
        Assert.EndsWith("libjemallocnet.so", loaded, StringComparison.Ordinal);
        Assert.Throws<InvalidOperationException>(() => Jem.SetNativeLibraryPath("/tmp/other/libjemallocnet.so"));
        Assert.Throws<ArgumentException>(() => Jem.SetNativeLibraryPath(" "));
    }
}
