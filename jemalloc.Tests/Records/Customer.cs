namespace jemalloc.Tests.Records;

/// <summary>The record of the worked table in docs/records.md: no field is a managed reference.</summary>
#region example: customer-struct
public struct Customer : IEquatable<Customer>
{
    public long Id { get; set; }

    public StoredUtf8String Name { get; set; }

    public int Category { get; set; }

    public readonly bool Equals(Customer other) => Id == other.Id && Category == other.Category && Name.IsSameStorage(other.Name);

    public override readonly bool Equals(object? obj) => obj is Customer other && Equals(other);

    public override readonly int GetHashCode() => HashCode.Combine(Id, Category);

    public static bool operator ==(Customer left, Customer right) => left.Equals(right);

    public static bool operator !=(Customer left, Customer right) => !left.Equals(right);
}
#endregion
