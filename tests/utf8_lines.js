// Copies standard input to standard output, keeping only the lines that are valid UTF-8.
'use strict';
const chunks = [];
process.stdin.on('data', (c) => chunks.push(c));
process.stdin.on('end', () => {
  const bytes = Buffer.concat(chunks);
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  const out = [];
  for (let start = 0; start < bytes.length;) {
    let end = bytes.indexOf(10, start);
    if (end < 0) end = bytes.length;
    const line = bytes.subarray(start, Math.min(end + 1, bytes.length));
    try { decoder.decode(line); out.push(line); } catch (e) { /* not UTF-8 */ }
    start = end + 1;
  }
  process.stdout.write(Buffer.concat(out));
});
