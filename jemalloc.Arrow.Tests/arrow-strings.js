// Apache Arrow for JavaScript checks the string and binary columns the .NET tests write, and writes
// some for them to read.
//   node arrow-strings.js read <path>    prints per column its type, length, null count, UTF-8 bytes
//                                        of its valid values and a 32-bit FNV-1a hash of them in row order (JSON)
//   node arrow-strings.js write <path> file|stream <rows>
//                                        writes name (utf8, null every 5th row), tag (large utf8) and blob (binary)
'use strict';
const fs = require('fs');
const arrow = require('apache-arrow');

const [mode, path, format, rowsText] = process.argv.slice(2);
const encoder = new TextEncoder();

function fnv(hash, byte) {
  return Math.imul(hash ^ byte, 16777619) >>> 0;
}

function text(i) {
  return `név-${i}-` + '日本'.repeat(i % 9) + (i % 11 === 0 ? '😀' : '');
}

if (mode === 'read') {
  const table = arrow.tableFromIPC(fs.readFileSync(path));
  const result = {};
  for (const field of table.schema.fields) {
    const column = table.getChild(field.name);
    let hash = 2166136261;
    let bytes = 0;
    for (let i = 0; i < column.length; i++) {
      const value = column.get(i);
      if (value === null) {
        hash = fnv(hash, 0x100);
        continue;
      }
      const data = typeof value === 'string' ? encoder.encode(value) : value;
      for (const b of data) hash = fnv(hash, b);
      hash = fnv(hash, 0x1FF);
      bytes += data.length;
    }
    result[field.name] = { type: String(field.type), length: column.length, nulls: column.nullCount, bytes, hash: String(hash) };
  }
  process.stdout.write(JSON.stringify(result));
} else if (mode === 'write') {
  const rows = Number(rowsText);
  const names = new Array(rows);
  const tags = new Array(rows);
  const blobs = new Array(rows);
  for (let i = 0; i < rows; i++) {
    names[i] = i % 5 === 0 ? null : text(i);
    tags[i] = `tag${i % 97}`;
    blobs[i] = Uint8Array.from([i & 255, 0, 255, (i >> 8) & 255].slice(0, i % 5));
  }
  const table = new arrow.Table({
    name: arrow.vectorFromArray(names, new arrow.Utf8()),
    tag: arrow.vectorFromArray(tags, new arrow.LargeUtf8()),
    blob: arrow.vectorFromArray(blobs, new arrow.Binary()),
  });
  fs.writeFileSync(path, arrow.tableToIPC(table, format));
} else {
  process.stderr.write('usage: arrow-strings.js read <path> | write <path> file|stream <rows>\n');
  process.exit(2);
}
