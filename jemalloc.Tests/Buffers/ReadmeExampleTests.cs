using jemalloc.Tests.Support;

namespace jemalloc.Tests.Buffers;

/// <summary>The usage patterns of the 2018 jemalloc.NET README (copy on read, a copy's free invalidating every copy, structs of native fields), as tests.</summary>
[Collection(LeakChecked.Name)]
public sealed class ReadmeExampleTests : LeakCheckedTest
{
    /// <summary>A user struct with native-memory fields, stored in a <see cref="SafeArray{T}"/>.</summary>
    private struct Employee : IEquatable<Employee>
    {
        public Guid Id { get; set; }
        public FixedUtf8String FirstName { get; set; }
        public FixedUtf8String LastName { get; set; }
        public DateTime? Dob { get; set; }
        public decimal Salary { get; set; }
        public FixedBuffer<float> Bonuses { get; set; }
        public FixedBuffer<byte> Photo { get; set; }

        public static Employee Make(Random random)
        {
            var id = new Guid(random.GetItems<byte>(Enumerable.Range(0, 256).Select(i => (byte)i).ToArray(), 16));
            string tag = id.ToString("N")[..4];
            byte[] photo = new byte[4096];
            random.NextBytes(photo);
            return new Employee
            {
                Id = id,
                FirstName = new FixedUtf8String("Gavial-" + tag),
                LastName = new FixedUtf8String("Buxarinovich-" + tag),
                Dob = tag.StartsWith('7') ? null : new DateTime(1990, 1, 1, 0, 0, 0, DateTimeKind.Utc),
                Salary = 2131m,
                Bonuses = new FixedBuffer<float>([100f, 250.5f]),
                Photo = new FixedBuffer<byte>(photo),
            };
        }

        public readonly void Free()
        {
            FirstName.Free();
            LastName.Free();
            Bonuses.Free();
            Photo.Free();
        }

        public readonly bool Equals(Employee other) =>
            Id == other.Id && FirstName == other.FirstName && LastName == other.LastName && Dob == other.Dob &&
            Salary == other.Salary && Bonuses == other.Bonuses && Photo == other.Photo;

        public override readonly bool Equals(object? obj) => obj is Employee other && Equals(other);

        public override readonly int GetHashCode() => Id.GetHashCode();
    }

    [Fact]
    public void FixedBuffer_fill_then_copy_on_read_and_ref_alias()
    {
        var buffer = new FixedBuffer<long>(1_000_000);
        buffer.Fill(100);
        long a = buffer[10];
        using (MemoryLease<long> lease = buffer.Lease())
        {
            ref long b = ref lease[10];
            b = 7;
        }

        Assert.Equal(100, a);
        Assert.Equal(7, buffer[10]);
        Assert.Equal(100, buffer[999_999]);
        buffer.Free();
    }

    [Fact]
    public void Copy_of_a_FixedBuffer_writes_the_same_memory_and_free_invalidates_both()
    {
        var array = new FixedBuffer<int>(100);
        array[16] = 1;
        FixedBuffer<int> copy = array;
        int a = copy[16];
        copy[5] = 99;
        int b = array[5];
        copy.Free();

        Assert.Equal(1, a);
        Assert.Equal(99, b);
        Assert.Throws<ObjectDisposedException>(() => array[16]);
    }

    [Fact]
    public void Employees_with_native_fields_live_in_a_SafeArray()
    {
        var random = new Random(42);
        using var employees = new SafeArray<Employee>(100);
        var expected = new Employee[100];
        for (int i = 0; i < employees.Length; i++)
        {
            expected[i] = Employee.Make(random);
            employees[i] = expected[i];
        }

        Assert.True(employees.EqualsArray(expected));
        Assert.StartsWith("Gavial-", employees[42].FirstName.ToString(), StringComparison.Ordinal);
        Assert.Equal(expected[42].Photo.ToArray(), employees[42].Photo.ToArray());
        Assert.Equal(250.5f, employees[7].Bonuses[1]);

        // A ref from a lease changes the stored element; the nested buffer is shared memory.
        using (MemoryLease<Employee> lease = employees.Lease())
        {
            ref Employee seventh = ref lease[7];
            seventh.Salary = 5000m;
            FixedBuffer<float> bonuses = seventh.Bonuses;
            bonuses[0] = 1f;
        }

        Assert.Equal(5000m, employees[7].Salary);
        Assert.Equal(1f, expected[7].Bonuses[0]);
        Assert.Equal(2131m, expected[7].Salary);
        Assert.False(employees.EqualsArray(expected));

        // Freeing a nested buffer through the managed copy invalidates it inside the native array too.
        expected[3].Photo.Free();
        Assert.Throws<ObjectDisposedException>(() => employees[3].Photo[0]);
        expected[3].Photo = default;
        employees[3] = employees[3] with { Photo = default };

        foreach (Employee employee in employees)
        {
            employee.FirstName.Free();
            employee.LastName.Free();
            employee.Bonuses.Free();
            if (employee.Photo.IsValid)
            {
                employee.Photo.Free();
            }
        }
    }

    [Fact]
    public void Employee_free_releases_every_nested_allocation()
    {
        long liveCount = AllocationLedger.LiveCount;
        Employee employee = Employee.Make(new Random(1));
        Assert.Equal(liveCount + 4, AllocationLedger.LiveCount);
        employee.Free();
        Assert.Equal(liveCount, AllocationLedger.LiveCount);
    }
}
