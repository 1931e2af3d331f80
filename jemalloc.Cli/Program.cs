namespace jemalloc.Cli;

internal static class Program
{
    private static int Main(string[] args)
    {
        Console.WriteLine($"jembench: native library {Jem.Load()}");
        return 0;
    }
}
