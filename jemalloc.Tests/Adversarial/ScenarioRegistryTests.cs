using System.Buffers.Binary;
using System.Reflection;
using System.Reflection.Emit;
using jemalloc.Tests.ChildProcess.Adversarial;

namespace jemalloc.Tests.Adversarial;

/// <summary>
/// The link between the child's adversarial scenarios and the tests that run them, checked both ways.
/// A scenario's name is an <c>internal const string</c> of its scenario class in
/// jemalloc.Tests.ChildProcess/Adversarial (<c>&lt;Family&gt;&lt;FailureClass&gt;Scenarios</c>, such as
/// <see cref="RecordTornCopyScenarios"/>), which registers it with the child's dispatcher
/// (<see cref="Scenarios"/>); the tests name the constant, so a renamed or removed scenario breaks
/// their build. What the compiler cannot see is checked here: the child knows exactly the constants;
/// every scenario is run by a test of its failure class's test class (<c>&lt;FailureClass&gt;Tests</c>:
/// <see cref="RecordTornCopyScenarios"/> by <see cref="TornCopyTests"/>); every adversarial test runs a
/// scenario the child knows.
/// </summary>
public sealed class ScenarioRegistryTests
{
    private static readonly Dictionary<short, OpCode> OpCodesByValue = typeof(OpCodes)
        .GetFields(BindingFlags.Public | BindingFlags.Static)
        .Select(field => (OpCode)field.GetValue(null)!)
        .ToDictionary(code => code.Value);

    [Fact]
    public void The_child_knows_exactly_the_scenario_constants_and_each_names_one_scenario()
    {
        List<(Type Type, string Name, string Value)> constants = ScenarioConstants();
        string[] known = AdversarialChild.List();

        AssertNone(
            constants.GroupBy(c => c.Value, StringComparer.Ordinal).Where(g => g.Count() > 1)
                .Select(g => $"'{g.Key}' is the value of {string.Join(" and ", g.Select(c => $"{c.Type.Name}.{c.Name}"))}")
            .Concat(constants.Where(c => !known.Contains(c.Value, StringComparer.Ordinal))
                .Select(c => $"{c.Type.Name}.{c.Name} = '{c.Value}' is not registered with the child's dispatcher"))
            .Concat(known.Where(name => !constants.Any(c => c.Value == name))
                .Select(name => $"'{name}' is registered without a constant of a scenario class")));
    }

    [Fact]
    public void Every_scenario_is_run_by_a_test_of_the_test_class_of_its_failure_class()
    {
        // A value two constants share is the first fact's failure; here either class will do.
        Dictionary<string, Type> scenarioClass = ScenarioConstants().GroupBy(c => c.Value, StringComparer.Ordinal)
            .ToDictionary(g => g.Key, g => g.First().Type, StringComparer.Ordinal);
        List<(MethodInfo Test, string Scenario)> runs = AdversarialTests()
            .SelectMany(test => ScenariosNamedBy(test).Where(scenarioClass.ContainsKey).Select(scenario => (test, scenario)))
            .ToList();

        AssertNone(
            scenarioClass.Keys.Where(scenario => !runs.Any(run => run.Scenario == scenario))
                .Select(scenario => $"{scenarioClass[scenario].Name}: '{scenario}' is run by no test")
            .Concat(runs.Where(run => !scenarioClass[run.Scenario].Name.EndsWith(FailureClassOf(run.Test.DeclaringType!) + "Scenarios", StringComparison.Ordinal))
                .Select(run => $"{run.Test.DeclaringType!.Name}.{run.Test.Name} runs '{run.Scenario}' of {scenarioClass[run.Scenario].Name}, a scenario of another failure class")));
    }

    [Fact]
    public void Every_adversarial_test_runs_a_scenario_the_child_knows()
    {
        HashSet<string> scenarios = ScenarioConstants().Select(c => c.Value).ToHashSet(StringComparer.Ordinal);
        MethodInfo[] tests = AdversarialTests().ToArray();

        Assert.NotEmpty(tests);
        AssertNone(
            tests.Where(test => !ScenariosNamedBy(test).Any(scenarios.Contains))
                .Select(test => $"{test.DeclaringType!.Name}.{test.Name} runs no scenario the child knows")
            .Concat(tests.SelectMany(test => InlineStrings(test).Where(value => !scenarios.Contains(value))
                .Select(value => $"{test.DeclaringType!.Name}.{test.Name} names '{value}', which is no scenario"))));
    }

    private static void AssertNone(IEnumerable<string> problems)
    {
        string[] all = problems.ToArray();
        Assert.True(all.Length == 0, string.Join(Environment.NewLine, all));
    }

    /// <summary>Every <c>internal const string</c> of the child's scenario classes: the scenario names.</summary>
    private static List<(Type Type, string Name, string Value)> ScenarioConstants() =>
        typeof(Scenarios).Assembly.GetTypes()
            .Where(type => type.Namespace == typeof(Scenarios).Namespace && type != typeof(Scenarios) && type.Name.EndsWith("Scenarios", StringComparison.Ordinal))
            .SelectMany(type => type.GetFields(BindingFlags.Static | BindingFlags.NonPublic | BindingFlags.Public | BindingFlags.DeclaredOnly)
                .Where(field => field.IsLiteral && field.IsAssembly && field.FieldType == typeof(string))
                .Select(field => (type, field.Name, (string)field.GetRawConstantValue()!)))
            .ToList();

    /// <summary>The tests of the classes in the adversarial scenarios' collection: those that run child scenarios.</summary>
    private static IEnumerable<MethodInfo> AdversarialTests() =>
        typeof(ScenarioRegistryTests).Assembly.GetTypes()
            .Where(type => type.CustomAttributes.Any(a => a.AttributeType == typeof(CollectionAttribute)
                && a.ConstructorArguments.Count == 1 && Equals(a.ConstructorArguments[0].Value, AdversarialScenarios.Name)))
            .SelectMany(type => type.GetMethods(BindingFlags.Instance | BindingFlags.Public | BindingFlags.DeclaredOnly))
            .Where(method => method.IsDefined(typeof(FactAttribute), inherit: true));

    /// <summary>The failure class a test class covers: its name without <c>Tests</c>.</summary>
    private static string FailureClassOf(Type testClass) =>
        testClass.Name.EndsWith("Tests", StringComparison.Ordinal) ? testClass.Name[..^"Tests".Length] : testClass.Name;

    /// <summary>The strings a test names: its <c>[InlineData]</c> strings and the string constants its body loads.</summary>
    private static IEnumerable<string> ScenariosNamedBy(MethodInfo test) => InlineStrings(test).Concat(StringsLoadedBy(test));

    private static IEnumerable<string> InlineStrings(MethodInfo test) =>
        test.CustomAttributes
            .Where(a => a.AttributeType == typeof(InlineDataAttribute))
            .SelectMany(a => (IEnumerable<CustomAttributeTypedArgument>)a.ConstructorArguments[0].Value!)
            .Select(argument => argument.Value)
            .OfType<string>();

    /// <summary>The strings <paramref name="method"/>'s IL loads (<c>ldstr</c>): the constants it names, which the compiler inlined.</summary>
    private static List<string> StringsLoadedBy(MethodInfo method)
    {
        byte[] il = method.GetMethodBody()?.GetILAsByteArray() ?? [];
        var strings = new List<string>();
        for (int i = 0; i < il.Length;)
        {
            OpCode code = il[i] == 0xFE ? OpCodesByValue[unchecked((short)(0xFE00 | il[i + 1]))] : OpCodesByValue[il[i]];
            i += code.Size;
            if (code == OpCodes.Ldstr)
            {
                strings.Add(method.Module.ResolveString(BinaryPrimitives.ReadInt32LittleEndian(il.AsSpan(i))));
            }

            i += code.OperandType switch
            {
                OperandType.InlineNone => 0,
                OperandType.ShortInlineBrTarget or OperandType.ShortInlineI or OperandType.ShortInlineVar => 1,
                OperandType.InlineVar => 2,
                OperandType.InlineI8 or OperandType.InlineR => 8,
                OperandType.InlineSwitch => 4 + (4 * BinaryPrimitives.ReadInt32LittleEndian(il.AsSpan(i))),
                _ => 4,
            };
        }

        return strings;
    }
}
