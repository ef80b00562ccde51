// Encode throughput of the reference encoder tiktoken@1.0.22 (WASM) under node, one thread.
//   node tokenizer_reference_bench.js ASSETS ENCODING TEXT [repeats]
// Prints "<MB/s median> <tokens>".
'use strict';
const fs = require('fs');
const path = require('path');
const [assets, encoding, textFile, repeatsArg] = process.argv.slice(2);
const repeats = Number(repeatsArg || 5);
const enc = require(path.resolve(assets, 'node_modules', 'tiktoken')).get_encoding(encoding);
const bytes = fs.readFileSync(textFile);
const text = new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes);
const times = [];
let tokens = 0;
for (let r = 0; r <= repeats; ++r) {
  const t0 = process.hrtime.bigint();
  const ids = enc.encode_ordinary(text);
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  if (r > 0) times.push(s);
  tokens = ids.length;
}
times.sort((a, b) => a - b);
const median = times.length % 2 ? times[(times.length - 1) / 2]
                                : (times[times.length / 2 - 1] + times[times.length / 2]) / 2;
console.log(`${(bytes.length / 1e6 / median).toFixed(2)} ${tokens}`);
