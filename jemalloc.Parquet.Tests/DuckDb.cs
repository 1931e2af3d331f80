using System.Data.Common;
using DuckDB.NET.Data;

namespace jemalloc.Parquet.Tests;

/// <summary>An in-memory DuckDB: its own Parquet reader and writer check ours.</summary>
public sealed class DuckDb : IDisposable
{
    private readonly DuckDBConnection _connection;

    public DuckDb()
    {
        _connection = new DuckDBConnection("DataSource=:memory:");
        _connection.Open();
    }

    public void Execute(string sql)
    {
        using DbCommand command = _connection.CreateCommand();
        command.CommandText = sql;
        command.ExecuteNonQuery();
    }

    public T Scalar<T>(string sql)
    {
        using DbCommand command = _connection.CreateCommand();
        command.CommandText = sql;
        object? value = command.ExecuteScalar();
        Assert.NotNull(value);
        Assert.IsNotType<DBNull>(value);
        return (T)Convert.ChangeType(value, typeof(T), System.Globalization.CultureInfo.InvariantCulture);
    }

    /// <summary>Runs a query and calls <paramref name="row"/> for each row; returns the number of rows.</summary>
    public long Query(string sql, Action<DbDataReader> row)
    {
        using DbCommand command = _connection.CreateCommand();
        command.CommandText = sql;
        using DbDataReader reader = command.ExecuteReader();
        long count = 0;
        while (reader.Read())
        {
            row(reader);
            count++;
        }

        return count;
    }

    public void Dispose() => _connection.Dispose();
}
