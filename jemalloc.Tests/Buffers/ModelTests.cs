using jemalloc.Tests.Support;

namespace jemalloc.Tests.Buffers;

/// <summary>
/// Random operation sequences applied both to a native structure and to a managed array (the
/// model): after every step both must hold the same elements, and an operation must throw exactly
/// when the same operation on the model is invalid.
/// </summary>
[Collection(LeakChecked.Name)]
public sealed class ModelTests : LeakCheckedTest
{
    private const int Steps = 1500;

    /// <summary>The operations every structure offers, as delegates over it.</summary>
    private sealed record Subject(
        Func<long, int> Get,
        Action<long, int> Set,
        Action<int> Fill,
        Action<ReadOnlyMemory<int>, long> CopyFrom,
        Func<long, int, int[]> CopyOut,
        Action<int> Multiply,
        Action<int> Add,
        Func<int> Sum,
        Func<int> Min,
        Func<int> Max,
        Func<int[]> ToArray);

    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(3)]
    public void FixedBuffer_behaves_like_a_managed_array(int seed)
    {
        var random = new Random(seed);
        var buffer = new FixedBuffer<int>(random.Next(1, 300));
        Run(random, buffer.Length, new Subject(
            i => buffer[checked((int)i)],
            (i, v) => buffer[checked((int)i)] = v,
            buffer.Fill,
            (source, at) => buffer.CopyFrom(source.Span, checked((int)at)),
            (at, count) => ReadRange(buffer.Lease(), at, count),
            f => buffer.VectorMultiply(f),
            a => buffer.VectorAdd(a),
            () => buffer.VectorSum(),
            () => buffer.VectorMin(),
            () => buffer.VectorMax(),
            buffer.ToArray));
        buffer.Free();
    }

    [Theory]
    [InlineData(4)]
    [InlineData(5)]
    [InlineData(6)]
    public void SafeArray_behaves_like_a_managed_array(int seed)
    {
        var random = new Random(seed);
        using var array = new SafeArray<int>(random.Next(1, 300));
        Run(random, array.Length, new Subject(
            i => array[checked((int)i)],
            (i, v) => array[checked((int)i)] = v,
            array.Fill,
            (source, at) => array.CopyFrom(source.Span, checked((int)at)),
            (at, count) => ReadRange(array.Lease(), at, count),
            array.VectorMultiply,
            array.VectorAdd,
            array.VectorSum,
            array.VectorMin,
            array.VectorMax,
            array.ToArray));
    }

    [Theory]
    [InlineData(7)]
    [InlineData(8)]
    [InlineData(9)]
    public void HugeArray_behaves_like_a_managed_array(int seed)
    {
        var random = new Random(seed);
        using var array = new HugeArray<int>(random.Next(1, 300));
        Run(random, (int)array.Length, new Subject(
            i => array[i],
            (i, v) => array[i] = v,
            array.Fill,
            (source, at) => array.CopyFrom(source.Span, at),
            (at, count) =>
            {
                var result = new int[count];
                array.CopyTo(result, at);
                return result;
            },
            array.VectorMultiply,
            array.VectorAdd,
            () => random.Next(2) == 0 ? array.VectorSum() : array.ParallelVectorSum(),
            array.VectorMin,
            array.VectorMax,
            () => array.ToArray()));
    }

    private static void Run(Random random, int length, Subject subject)
    {
        var model = new int[length];
        for (int step = 0; step < Steps; step++)
        {
            // Indexes and ranges are sometimes just outside the array, to test the failure paths too.
            long index = random.Next(-2, length + 2);
            int value = random.Next(int.MinValue, int.MaxValue);
            bool inRange = index >= 0 && index < length;
            switch (random.Next(10))
            {
                case 0:
                    if (inRange)
                    {
                        subject.Set(index, value);
                        model[index] = value;
                    }
                    else
                    {
                        Assert.ThrowsAny<Exception>(() => subject.Set(index, value));
                    }

                    break;
                case 1:
                    if (inRange)
                    {
                        Assert.Equal(model[index], subject.Get(index));
                    }
                    else
                    {
                        Assert.Throws<IndexOutOfRangeException>(() => subject.Get(index));
                    }

                    break;
                case 2:
                    subject.Fill(value);
                    Array.Fill(model, value);
                    break;
                case 3:
                {
                    int count = random.Next(0, length + 1);
                    int[] source = Enumerable.Range(0, count).Select(_ => random.Next()).ToArray();
                    if (index >= 0 && index + count <= length)
                    {
                        subject.CopyFrom(source, index);
                        source.CopyTo(model, index);
                    }
                    else
                    {
                        Assert.Throws<ArgumentOutOfRangeException>(() => subject.CopyFrom(source, index));
                    }

                    break;
                }

                case 4:
                {
                    int count = random.Next(0, length + 1);
                    if (index >= 0 && index + count <= length)
                    {
                        Assert.Equal(model.AsSpan((int)index, count).ToArray(), subject.CopyOut(index, count));
                    }
                    else
                    {
                        Assert.Throws<ArgumentOutOfRangeException>(() => subject.CopyOut(index, count));
                    }

                    break;
                }

                case 5:
                {
                    int factor = random.Next(-5, 6);
                    subject.Multiply(factor);
                    for (int i = 0; i < length; i++)
                    {
                        model[i] = unchecked(model[i] * factor);
                    }

                    break;
                }

                case 6:
                    subject.Add(value);
                    for (int i = 0; i < length; i++)
                    {
                        model[i] = unchecked(model[i] + value);
                    }

                    break;
                case 7:
                {
                    int sum = 0;
                    foreach (int v in model)
                    {
                        sum = unchecked(sum + v);
                    }

                    Assert.Equal(sum, subject.Sum());
                    break;
                }

                case 8:
                    Assert.Equal(model.Min(), subject.Min());
                    Assert.Equal(model.Max(), subject.Max());
                    break;
                default:
                    Assert.Equal(model, subject.ToArray());
                    break;
            }
        }

        Assert.Equal(model, subject.ToArray());
    }

    private static int[] ReadRange(MemoryLease<int> lease, long at, int count)
    {
        using (lease)
        {
            return lease.AsSpan(at, count).ToArray();
        }
    }
}
