namespace jemalloc.Tests.Records;

/// <summary>A key whose hash code takes only five values, so that index keys collide on purpose.</summary>
internal readonly record struct CollidingKey(int Id)
{
    public override int GetHashCode() => Id % 5;
}
