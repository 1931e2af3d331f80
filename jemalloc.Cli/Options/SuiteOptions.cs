using CommandLine;

namespace jemalloc.Cli.Options;

/// <summary>The options of the verbs that benchmark one element type over given sizes.</summary>
public abstract class SuiteOptions : RunOptions
{
    /// <summary>8-bit integers.</summary>
    [Option('b', "int8", HelpText = "8-bit integer elements (SByte; with -u, Byte).")]
    public bool EightBit { get; set; }

    /// <summary>16-bit integers.</summary>
    [Option('h', "int16", HelpText = "16-bit integer elements (Int16; with -u, UInt16).")]
    public bool SixteenBit { get; set; }

    /// <summary>32-bit integers.</summary>
    [Option('i', "int32", HelpText = "32-bit integer elements (Int32; with -u, UInt32).")]
    public bool ThirtyTwoBit { get; set; }

    /// <summary>64-bit integers.</summary>
    [Option('l', "int64", HelpText = "64-bit integer elements (Int64; with -u, UInt64).")]
    public bool SixtyFourBit { get; set; }

    /// <summary>Unsigned integers.</summary>
    [Option('u', "unsigned", HelpText = "Make the integer type unsigned (with -b, -h, -i or -l).")]
    public bool IsUnsigned { get; set; }

    /// <summary>Single-precision floats.</summary>
    [Option('f', "float", HelpText = "Single-precision floating-point elements.")]
    public bool SinglePrecision { get; set; }

    /// <summary>Double-precision floats.</summary>
    [Option('d', "double", HelpText = "Double-precision floating-point elements.")]
    public bool DoublePrecision { get; set; }

    /// <summary>A user-defined struct.</summary>
    [Option("udt", HelpText = "A user-defined struct (an employee record) as the element.")]
    public bool Udt { get; set; }

    /// <summary>Allocate new memory.</summary>
    [Option("create", HelpText = "Benchmark creating (allocating and filling) the structure.")]
    public bool Create { get; set; }

    /// <summary>Fill existing memory.</summary>
    [Option("fill", HelpText = "Benchmark filling existing memory with one value (array, buffer, hugearray: also create-and-fill).")]
    public bool Fill { get; set; }

    /// <summary>The sizes.</summary>
    [Value(0, MetaName = "sizes", HelpText = "One or more sizes: element counts, or as the verb says.")]
    public IEnumerable<long> Sizes { get; set; } = [];

    /// <summary>Whether the verb accepts the user-defined struct.</summary>
    protected virtual bool AllowsUdt => false;

    /// <summary>Whether the verb accepts floating-point types.</summary>
    protected virtual bool AllowsFloatingPoint => true;

    /// <summary>The element type the flags select.</summary>
    /// <exception cref="CommandLineException">No type, more than one, or one this verb does not take.</exception>
    public Type ResolveElementType(string verb)
    {
        (bool Set, string Flag)[] flags =
        [
            (EightBit, "-b"), (SixteenBit, "-h"), (ThirtyTwoBit, "-i"), (SixtyFourBit, "-l"),
            (SinglePrecision, "-f"), (DoublePrecision, "-d"), (Udt, "--udt"),
        ];
        var chosen = flags.Where(f => f.Set).Select(f => f.Flag).ToList();
        string allowed = "-b, -h, -i, -l (with -u for unsigned)" + (AllowsFloatingPoint ? ", -f, -d" : "") + (AllowsUdt ? " or --udt" : "");
        if (chosen.Count == 0)
        {
            throw new CommandLineException($"{verb}: choose an element type: {allowed}.");
        }

        if (chosen.Count > 1)
        {
            throw new CommandLineException($"{verb}: choose exactly one element type; {string.Join(" and ", chosen)} were given.");
        }

        if (IsUnsigned && (SinglePrecision || DoublePrecision || Udt))
        {
            throw new CommandLineException($"{verb}: -u (unsigned) only goes with an integer type (-b, -h, -i, -l), not {chosen[0]}.");
        }

        if ((SinglePrecision || DoublePrecision) && !AllowsFloatingPoint)
        {
            throw new CommandLineException($"{verb} does not take {chosen[0]}; use {allowed}.");
        }

        if (Udt && !AllowsUdt)
        {
            throw new CommandLineException($"{verb} does not take --udt; use {allowed}.");
        }

        return chosen[0] switch
        {
            "-b" => IsUnsigned ? typeof(byte) : typeof(sbyte),
            "-h" => IsUnsigned ? typeof(ushort) : typeof(short),
            "-i" => IsUnsigned ? typeof(uint) : typeof(int),
            "-l" => IsUnsigned ? typeof(ulong) : typeof(long),
            "-f" => typeof(float),
            "-d" => typeof(double),
            _ => typeof(Benchmarks.Infrastructure.Employee),
        };
    }
}
