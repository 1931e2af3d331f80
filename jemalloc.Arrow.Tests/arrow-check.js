// Apache Arrow for JavaScript, an implementation that shares no code with Arrow for .NET, checks
// the IPC files and streams the .NET tests write, and writes some for them to read.
//   node arrow-check.js read <path>           prints each column's type, length, null count and sum (JSON)
//   node arrow-check.js write <path> file|stream <rows>   writes id (int64), x (float64, null every 7th row), n (int32)
//   node arrow-check.js values <path>         prints each column's type, null count and every value as text (JSON):
//                                             null, a decimal's unscaled integer, a binary value's bytes in hex
//   node arrow-check.js write-strings <path> file|stream <batch lengths>   writes utf8, binary, large_utf8 and large_binary columns (see stringValue)
//   node arrow-check.js write-types <path> file|stream <batch lengths, comma-separated>
//                                             writes a column of every fixed-width type (see typedColumns), in those batches
//   node arrow-check.js write-decimals <path> file|stream <batch lengths, comma-separated>
//                                             writes Decimal128, Decimal256 and FixedSizeBinary columns (see decimalColumns)
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
      if (typeof value === 'string' || value instanceof Uint8Array) {
        // Strings and binary: a checksum of their UTF-8 bytes, each value's weighted by its row.
        const bytes = typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
        for (const b of bytes) sum += b * ((i % 13) + 1);
      } else if (typeof value === 'bigint') { big = true; bigSum += value; } else { sum += value; }
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
} else if (mode === 'write-types') {
  const lengths = rowsText.split(',').map(Number);
  const tables = [];
  let row = 0;
  for (const length of lengths) {
    const columns = {};
    for (const [name, type, value, isNull] of typedColumns()) {
      columns[name] = makeColumn(type, row, length, value, isNull);
    }
    tables.push(new arrow.Table(columns));
    row += length;
  }
  const table = tables.reduce((a, b) => a.concat(b));
  fs.writeFileSync(path, arrow.tableToIPC(table, format));
} else if (mode === 'write-decimals') {
  const lengths = rowsText.split(',').map(Number);
  const tables = [];
  let row = 0;
  for (const length of lengths) {
    const columns = {};
    for (const [name, type, value, isNull] of decimalColumns()) {
      columns[name] = makeWideColumn(type, row, length, value, isNull);
    }
    tables.push(new arrow.Table(columns));
    row += length;
  }
  fs.writeFileSync(path, arrow.tableToIPC(tables.reduce((a, b) => a.concat(b)), format));
} else if (mode === 'write-strings') {
  const lengths = rowsText.split(',').map(Number);
  const tables = [];
  let row = 0;
  for (const length of lengths) {
    const text = [];
    const bytes = [];
    for (let i = 0; i < length; i++) {
      const r = row + i;
      text.push(r % 6 === 1 ? null : stringValue(r));
      bytes.push(r % 4 === 3 ? null : Buffer.from(stringValue(r), 'utf8'));
    }
    tables.push(new arrow.Table({
      s: arrow.vectorFromArray(text, new arrow.Utf8()),
      bin: arrow.vectorFromArray(bytes, new arrow.Binary()),
      ls: arrow.vectorFromArray(text, new arrow.LargeUtf8()),
      lbin: arrow.vectorFromArray(bytes, new arrow.LargeBinary()),
    }));
    row += length;
  }
  fs.writeFileSync(path, arrow.tableToIPC(tables.reduce((a, b) => a.concat(b)), format));
} else {
  process.stderr.write('usage: arrow-check.js read <path> | values <path> | write <path> file|stream <rows> | write-types|write-strings|write-decimals <path> file|stream <batch lengths>\n');
  process.exit(2);
}

// Each column's value at row r (and whether r is null), the same formulas as IpcInteropTests.cs.
function typedColumns() {
  const nullEvery5 = (r) => r % 5 === 2;
  return [
    ['i8', new arrow.Int8(), (r) => (r % 251) - 125, nullEvery5],
    ['u8', new arrow.Uint8(), (r) => r % 256, null],
    ['i16', new arrow.Int16(), (r) => ((r * 3) % 60000) - 30000, null],
    ['u16', new arrow.Uint16(), (r) => (r * 5) % 65536, null],
    ['i32', new arrow.Int32(), (r) => r * 1001 - 5000000, null],
    ['u32', new arrow.Uint32(), (r) => r * 70001, null],
    ['i64', new arrow.Int64(), (r) => BigInt(r) * 3000000007n - 9000000000000n, null],
    ['u64', new arrow.Uint64(), (r) => (1n << 63n) + BigInt(r), null],
    ['f16', new arrow.Float16(), (r) => halfBits(r % 1000), null],
    ['f32', new arrow.Float32(), (r) => r * 0.25, null],
    ['f64', new arrow.Float64(), (r) => r * 0.5 - 100, nullEvery5],
    ['b', new arrow.Bool(), (r) => r % 3 === 0, (r) => r % 7 === 3],
    ['d32', new arrow.DateDay(), (r) => r - 1000, null],
    ['d64', new arrow.DateMillisecond(), (r) => BigInt(r - 1000) * 86400000n, null],
    ['ts', new arrow.TimestampMicrosecond('UTC'), (r) => BigInt(r) * 1000001n, nullEvery5],
    ['t32', new arrow.TimeMillisecond(), (r) => (r * 1000) % 86400000, null],
    ['t64', new arrow.TimeNanosecond(), (r) => BigInt(r) * 999999937n, null],
    ['dur', new arrow.DurationMillisecond(), (r) => BigInt(r * 13 - 50), null],
  ];
}

// Each decimal column's unscaled value (a BigInt) or fixed-size binary column's bytes at row r, and
// whether r is null: the same formulas as IpcDecimalTests.cs.
function decimalColumns() {
  const max38 = 10n ** 38n - 1n;
  return [
    ['dec1', new arrow.Decimal(0, 1), (r) => BigInt((r % 19) - 9), (r) => r % 5 === 2],
    ['dec9', new arrow.Decimal(2, 9), (r) => (BigInt(r) * 7919193n) % 1000000000n - 500000000n, null],
    ['dec18', new arrow.Decimal(6, 18), (r) => (BigInt(r) * 123456789012345n) % 10n ** 18n - 5n * 10n ** 17n, (r) => r % 7 === 3],
    ['dec38', new arrow.Decimal(10, 38), (r) => r === 0 ? max38 : r === 1 ? -max38 : (r % 2 === 1 ? -1n : 1n) * (BigInt(r) * 10n ** 33n + BigInt(r) * BigInt(r)), (r) => r % 11 === 5],
    ['fsb16', new arrow.FixedSizeBinary(16), (r) => Uint8Array.from({ length: 16 }, (_, i) => (r * 31 + i * 7) & 255), (r) => r % 6 === 1],
    ['fsb3', new arrow.FixedSizeBinary(3), (r) => Uint8Array.from({ length: 3 }, (_, i) => (r + i * 101) & 255), null],
    ['d256', new arrow.Decimal(2, 40, 256), (r) => BigInt(r) * 10n ** 39n, null],
  ];
}

// A decimal or fixed-size binary column of rows [start, start + length) from its raw storage: a
// decimal's value as little-endian 32-bit words of its two's complement, a binary value's bytes.
function makeWideColumn(type, start, length, value, isNull) {
  const isDecimal = type instanceof arrow.Decimal;
  const width = isDecimal ? type.bitWidth / 8 : type.byteWidth;
  const bytes = new Uint8Array(length * width);
  const bitmap = new Uint8Array((length + 7) >> 3);
  let nullCount = 0;
  for (let i = 0; i < length; i++) {
    const r = start + i;
    if (isNull && isNull(r)) {
      nullCount++;
    } else {
      bitmap[i >> 3] |= 1 << (i & 7);
    }
    if (isDecimal) {
      let v = BigInt.asUintN(type.bitWidth, value(r));
      for (let k = 0; k < width; k++, v >>= 8n) bytes[i * width + k] = Number(v & 255n);
    } else {
      bytes.set(value(r), i * width);
    }
  }
  const data = isDecimal ? new Uint32Array(bytes.buffer) : bytes;
  return arrow.makeVector(arrow.makeData({ type, length, nullCount, nullBitmap: nullCount > 0 ? bitmap : null, data }));
}

// A column of rows [start, start + length) made from its raw storage, so every value is exact.
function makeColumn(type, start, length, value, isNull) {
  const isBool = type instanceof arrow.Bool;
  const data = isBool ? new Uint8Array((length + 7) >> 3) : new type.ArrayType(length);
  const bitmap = new Uint8Array((length + 7) >> 3);
  let nullCount = 0;
  for (let i = 0; i < length; i++) {
    const r = start + i;
    if (isNull && isNull(r)) {
      nullCount++;
    } else {
      bitmap[i >> 3] |= 1 << (i & 7);
    }
    let v = value(r);
    if (isBool) {
      if (v) data[i >> 3] |= 1 << (i & 7);
    } else {
      if (data instanceof BigInt64Array || data instanceof BigUint64Array) v = BigInt(v);
      else if (typeof v === 'bigint') v = Number(v);
      data[i] = v;
    }
  }
  return arrow.makeVector(arrow.makeData({ type, length, nullCount, nullBitmap: nullCount > 0 ? bitmap : null, data }));
}

// The IEEE half-precision bits of a whole number below 2048.
function halfBits(n) {
  if (n === 0) return 0;
  const e = Math.floor(Math.log2(n));
  return ((e + 15) << 10) | Math.round((n / 2 ** e - 1) * 1024);
}

// Row r's string (the same formula as IpcStringTests.cs): empty every 9th row, otherwise r's digits
// and, every 5th row, non-ASCII text.
function stringValue(r) {
  if (r % 9 === 0) return '';
  return 'v' + r + (r % 5 === 0 ? '-\u00e9\u4e2d\u{1F600}' : '');
}
