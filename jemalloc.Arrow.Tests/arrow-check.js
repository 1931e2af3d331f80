// Apache Arrow for JavaScript, an implementation that shares no code with Arrow for .NET, checks
// the IPC files and streams the .NET tests write, and writes some for them to read.
//   node arrow-check.js read <path>           prints each column's type, length, null count and sum (JSON)
//   node arrow-check.js write <path> file|stream <rows>   writes id (int64), x (float64, null every 7th row), n (int32)
//   node arrow-check.js values <path>         prints each column's type, null count and every value as text (JSON):
//                                             null, a decimal's unscaled integer, a binary value's bytes in hex
'use strict';
const fs = require('fs');
const arrow = require('apache-arrow');

const [mode, path, format, rowsText] = process.argv.slice(2);
if (mode === 'read') {
  const table = arrow.tableFromIPC(fs.readFileSync(path));
  const result = {};
  for (const field of table.schema.fields) {
    const column = table.getChild(field.name);
    let bigSum = 0n;
    let sum = 0;
    let big = false;
    for (let i = 0; i < column.length; i++) {
      const value = column.get(i);
      if (value === null) continue;
      if (typeof value === 'bigint') { big = true; bigSum += value; } else { sum += value; }
    }
    result[field.name] = {
      type: String(field.type),
      length: column.length,
      nulls: column.nullCount,
      sum: big ? bigSum.toString() : String(sum),
    };
  }
  process.stdout.write(JSON.stringify(result));
} else if (mode === 'values') {
  const table = arrow.tableFromIPC(fs.readFileSync(path));
  const result = {};
  for (const field of table.schema.fields) {
    const column = table.getChild(field.name);
    const values = [];
    for (let i = 0; i < column.length; i++) {
      const value = column.get(i);
      if (value === null) {
        values.push(null);
      } else if (value instanceof Uint8Array) {
        values.push(Buffer.from(value).toString('hex'));
      } else {
        values.push(String(value));
      }
    }
    result[field.name] = { type: String(field.type), nulls: column.nullCount, values };
  }
  process.stdout.write(JSON.stringify(result));
} else if (mode === 'write') {
  const rows = Number(rowsText);
  const id = new BigInt64Array(rows);
  const x = new Array(rows);
  const n = new Int32Array(rows);
  for (let i = 0; i < rows; i++) {
    id[i] = BigInt(i) * 3n - 7n;
    x[i] = i % 7 === 0 ? null : i * 0.5;
    n[i] = (i % 1000) - 500;
  }
  const table = new arrow.Table({
    id: arrow.makeVector(id),
    x: arrow.vectorFromArray(x, new arrow.Float64()),
    n: arrow.makeVector(n),
  });
  fs.writeFileSync(path, arrow.tableToIPC(table, format));
} else {
  process.stderr.write('usage: arrow-check.js read <path> | values <path> | write <path> file|stream <rows>\n');
  process.exit(2);
}
