// llama.cpp's side of bench/run_generate_bench.sh: greedy decoding of a GGUF model from the
// given prompt ids with node-llama-cpp@3.21.1's prebuilt CPU llama.cpp; prints one JSON line
// {tokens, decode_s, tok_s, prefill_s}.
//   node generate_bench_llama.mjs LLAMA_DIR MODEL.gguf PROMPT_IDS_JSON MAX_TOKENS THREADS
import fs from "fs";
import path from "path";

const [llamaDir, gguf, promptFile, maxTokens, threads] = process.argv.slice(2);
const {getLlama} = await import(path.join(llamaDir, "node_modules/node-llama-cpp/dist/index.js"));
const n = Number(threads);
const llama = await getLlama({gpu: false, build: "never", logLevel: "error", maxThreads: n});
const model = await llama.loadModel({modelPath: gguf});
const context = await model.createContext({contextSize: 1024, batchSize: 512,
                                           threads: {ideal: n, min: n}});
const seq = context.getSequence();
const prompt = JSON.parse(fs.readFileSync(promptFile, "utf8"));
const t0 = performance.now();
let first = 0, count = 0, t1 = 0;
for await (const token of seq.evaluate(prompt, {temperature: 0})) {
  if (count === 0) t1 = performance.now();  // the prompt's prefill and the first token
  first = first || token;
  if (++count === Number(maxTokens)) break;
}
const t2 = performance.now();
const decode_s = (t2 - t1) / 1000;
console.log(JSON.stringify({tokens: count, decode_s, tok_s: (count - 1) / decode_s,
                            prefill_s: (t1 - t0) / 1000}));
await context.dispose();
await model.dispose();
