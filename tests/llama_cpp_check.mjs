// llama.cpp (node-llama-cpp@3.21.1, its prebuilt CPU binary) reads trail's GGUF export:
//   node llama_cpp_check.mjs LLAMA_DIR MODEL.gguf TEXT_FILE TEXT_PROBE GREEDY_JSON GREEDY_PROBE
// TEXT_PROBE / GREEDY_PROBE are probe_for_test's outputs (without .json/.probs): trail's ids and
// next-token probabilities of the text's first 256 tokens and of `trail generate
// --temperature 0`'s prompt + continuation (GREEDY_JSON is that command's --json output).
// Checks:
//   1. llama.cpp tokenizes the text to trail's ids;
//   2. its next-token probabilities over the 256 tokens agree with trail's: max |Δp| <= 1e-3
//      for an f32 export, and the argmax is the same wherever trail's top-2 margin exceeds 1e-3.
//      Both compute the same float32 model (llama.cpp with its own kernels, summation orders and
//      exp/softmax): their logits differ by a few 1e-6 relative, which moved probabilities by at
//      most 1.1e-4 on the demo model; 1e-3 leaves a margin and still catches any wrong tensor,
//      layout, norm or rotary convention (those move probabilities by 1e-1). An f16 export is
//      held to the same bound: its rounding of the weights (2^-11 relative) moved them by at
//      most 1.4e-4 on the test model.
//   3. its greedy continuation of the prompt equals trail's up to the first position where
//      trail's top-2 margin is below 1e-3 (beyond that a tie may legitimately break either way).
import fs from "fs";
import path from "path";

const [llamaDir, gguf, textFile, textProbe, greedyJson, greedyProbe] = process.argv.slice(2);
const {getLlama} = await import(path.join(llamaDir, "node_modules/node-llama-cpp/dist/index.js"));
const fail = (msg) => { console.error("FAIL: " + msg); process.exit(1); };

function readProbe(prefix) {
  const meta = JSON.parse(fs.readFileSync(prefix + ".json", "utf8"));
  const buf = fs.readFileSync(prefix + ".probs");
  const probs = new Float64Array(buf.buffer, buf.byteOffset, buf.length / 8);
  return {ids: meta.ids, V: meta.vocab, row: (t) => probs.subarray(t * meta.vocab, (t + 1) * meta.vocab)};
}
function top2(row) {
  let a = -1, b = -1;
  for (let i = 0; i < row.length; i++) {
    if (a < 0 || row[i] > row[a]) { b = a; a = i; } else if (b < 0 || row[i] > row[b]) b = i;
  }
  return {arg: a, margin: row[a] - row[b]};
}

const llama = await getLlama({gpu: false, build: "never", logLevel: "error"});
const model = await llama.loadModel({modelPath: gguf});
const context = await model.createContext({contextSize: 512, batchSize: 512, threads: 2, sequences: 2});

// 1. Tokens.
const text = fs.readFileSync(textFile, "utf8");
const trail = readProbe(textProbe);
const ours = Array.from(model.tokenize(text, false)).slice(0, trail.ids.length);
if (ours.length !== trail.ids.length || ours.some((t, i) => t !== trail.ids[i])) {
  const at = ours.findIndex((t, i) => t !== trail.ids[i]);
  fail(`llama.cpp's ids differ from trail's at token ${at}: ${ours.slice(at, at + 5)} vs ` +
       `${trail.ids.slice(at, at + 5)}`);
}
console.log(`tokens: llama.cpp's ${ours.length} ids are trail's`);

// 2. Next-token probabilities.
async function probabilities(ids) {
  const seq = context.getSequence();
  const out = await seq.controlledEvaluate(ids.map((t) => [t, {generateNext: {probabilities: true}}]));
  seq.dispose();
  return out.map((o) => o.next.probabilities);
}
const V = trail.V;
const theirs = await probabilities(trail.ids);
let maxDiff = 0, argmaxChecked = 0;
for (let t = 0; t < trail.ids.length; t++) {
  const mine = trail.row(t), map = theirs[t];
  const dense = new Float64Array(V);
  for (const [tok, p] of map) dense[tok] = p;
  for (let v = 0; v < V; v++) maxDiff = Math.max(maxDiff, Math.abs(dense[v] - mine[v]));
  const a = top2(mine), b = top2(dense);
  if (a.margin > 1e-3) {
    argmaxChecked++;
    if (a.arg !== b.arg) fail(`position ${t}: argmax ${b.arg} in llama.cpp, ${a.arg} in trail (margin ${a.margin})`);
  }
}
console.log(`probabilities: max |dp| ${maxDiff.toExponential(2)} over ${trail.ids.length} positions; ` +
            `argmax equal at all ${argmaxChecked} with a margin above 1e-3`);
if (!(maxDiff <= 1e-3)) fail(`max |dp| ${maxDiff} exceeds 1e-3`);

// 3. Greedy continuation.
const gen = JSON.parse(fs.readFileSync(greedyJson, "utf8"));
const g = readProbe(greedyProbe);  // prompt + continuation but its last token
const seq = context.getSequence();
let ids = [...gen.prompt_ids], compared = 0;
for (let i = 0; i < gen.ids.length; i++) {
  const res = await seq.controlledEvaluate(
      (i === 0 ? ids : [ids[ids.length - 1]]).map((t, j, all) =>
          j === all.length - 1 ? [t, {generateNext: {probabilities: true}}] : t));
  const probs = res[res.length - 1].next.probabilities;
  const next = probs.entries().next().value[0];
  const margin = top2(g.row(gen.prompt_ids.length - 1 + i)).margin;
  if (margin < 1e-3) break;
  if (next !== gen.ids[i]) fail(`greedy token ${i}: llama.cpp ${next}, trail ${gen.ids[i]} (margin ${margin})`);
  compared++;
  ids.push(next);
}
console.log(`greedy: llama.cpp continues with trail's ${compared} of ${gen.ids.length} tokens ` +
            `(compared up to the first top-2 margin below 1e-3)`);
if (compared < 8) fail("fewer than 8 greedy tokens compared");
await context.dispose();
await model.dispose();
console.log("PASS");
