// Apache Arrow for JavaScript checks the string and binary columns the .NET tests write, and writes
// some for them to read.
//   node arrow-strings.js read <path>    prints per column its type, length, null count, UTF-8 bytes
//                                        of its valid values and a 32-bit FNV-1a hash of them in row order (JSON)
//   node arrow-strings.js write <path> file|stream <rows>
//                                        writes name (utf8, null every 5th row), tag (large utf8) and blob (binary)
//   node arrow-strings.js write-dict <path> file|stream <rows>
//                                        writes category (dictionary of utf8, int32 indices, null every 7th row)
//                                        and code (dictionary of utf8, int16 indices); a stream in batches of 10,000 rows
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
} else if (mode === 'write-dict') {
  const rows = Number(rowsText);
  // A file holds one dictionary per column (no replacement dictionaries): one batch; a stream, one per 10,000 rows.
  const batchRows = format === 'file' ? rows : 10000;
  const batches = [];
  for (let start = 0; start < rows; start += batchRows) {
    const end = Math.min(rows, start + batchRows);
    const categories = [];
    const codes = [];
    for (let i = start; i < end; i++) {
      categories.push(i % 7 === 0 ? null : `cat-${i % 301}-é`);
      codes.push(i % 3 === 0 ? '' : `c${i % 11}`);
    }
    batches.push(new arrow.Table({
      category: arrow.vectorFromArray(categories, new arrow.Dictionary(new arrow.Utf8(), new arrow.Int32())),
      code: arrow.vectorFromArray(codes, new arrow.Dictionary(new arrow.Utf8(), new arrow.Int16())),
    }));
  }
  fs.writeFileSync(path, arrow.tableToIPC(batches.reduce((a, b) => a.concat(b)), format));
} else {
  process.stderr.write('usage: arrow-strings.js read <path> | write <path> file|stream <rows> | write-dict <path> file|stream <rows>\n');
  process.exit(2);
}
