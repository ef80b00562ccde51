// Encode throughput of a reference encoder under node, one thread.
//   node tokenizer_reference_bench.js ASSETS ENCODING TEXT [repeats] [wasm|native]
// wasm: tiktoken@1.0.22, the reference implementation compiled to WASM. native: the same Rust
// crate compiled natively (@anysphere/tiktoken-node-linux-x64-gnu@0.2.1; cl100k_base and
// o200k_base; its encode runs on one libuv worker thread). Prints "<MB/s median> <tokens>", or
// "n/a 0" when the engine is not installed (it is x86-64 Linux only).
'use strict';
const fs = require('fs');
const path = require('path');
const [assets, encoding, textFile, repeatsArg, engineArg] = process.argv.slice(2);
const repeats = Number(repeatsArg || 5);
const engine = engineArg || 'wasm';
const modules = path.resolve(assets, 'node_modules');

function wasmEncoder() {
  const enc = require(path.join(modules, 'tiktoken')).get_encoding(encoding);
  return async (text) => enc.encode_ordinary(text);
}

function nativeEncoder() {
  const file = path.join(modules, '@anysphere/tiktoken-node-linux-x64-gnu',
                         'tiktoken-node.linux-x64-gnu.node');
  if (!fs.existsSync(file)) return null;
  const m = require(file);
  const which = { cl100k_base: m.SupportedEncoding.Cl100k, o200k_base: m.SupportedEncoding.O200k }[encoding];
  if (which === undefined) throw new Error(`the native reference has no ${encoding}`);
  const tok = m.getTokenizer();
  return (text) => tok.encode(text, which, m.SpecialTokenAction.NormalText, {});
}

(async () => {
  const encode = engine === 'native' ? nativeEncoder() : wasmEncoder();
  if (encode === null) {
    console.log('n/a 0');
    return;
  }
  const bytes = fs.readFileSync(textFile);
  const text = new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes);
  const times = [];
  let tokens = 0;
  for (let r = 0; r <= repeats; ++r) {
    const t0 = process.hrtime.bigint();
    const ids = await encode(text);
    const s = Number(process.hrtime.bigint() - t0) / 1e9;
    if (r > 0) times.push(s);
    tokens = ids.length;
  }
  times.sort((a, b) => a - b);
  const median = times.length % 2 ? times[(times.length - 1) / 2]
                                  : (times[times.length / 2 - 1] + times[times.length / 2]) / 2;
  console.log(`${(bytes.length / 1e6 / median).toFixed(2)} ${tokens}`);
})();
