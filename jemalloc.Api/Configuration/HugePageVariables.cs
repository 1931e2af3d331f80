namespace jemalloc.Configuration;

/// <summary>
/// The environment variable that sets the huge-page selection at startup: read by
/// <see cref="HugePagePolicy"/> and named by <see cref="JemSettings.Describe"/>, which are in later layers.
/// </summary>
internal static class HugePageVariables
{
    /// <summary><c>measured</c>, <c>always</c> or <c>never</c> (any case, blanks around; empty is unset): <see cref="HugePagePolicy.Selection"/>'s first value.</summary>
    internal const string Selection = "JEMALLOC_NET_HUGE_PAGES";
}
