// For the llama.cpp and transformers interop tests (tests/llama_cpp_check.mjs,
// tests/peers/transformers_check.py): trail's next-token probabilities
// of a run's newest checkpoint over a sequence, from the KV-cache decoder.
//   probe_for_test RUN text FILE OUT   the first 256 tokens of FILE's text (trail's ids; fewer
//                                      when the model's context is shorter)
//   probe_for_test RUN ids FILE OUT    the ids of FILE (a JSON array)
// OUT.json gets {"ids": [...], "vocab": V}; OUT.probs the float64 probabilities [n, V], row t
// the distribution of the token after ids[0..t], p = exp(logit − lse) of §2's float32 log-prob;
// OUT.logits the float32 logits [n, V] themselves (little-endian), for the transformers check
// (tests/peers/transformers_check.py).
//   probe_for_test RUN pairs FILE OUT  FILE: JSON lines {"context", "continuation"}; OUT.jsonl
//                                      gets, per line, the ids trail's evaluation scores:
//                                      {"context": [...], "continuation": [...]} of the pair
//                                      encoding (infer/loglikelihood.h), for the lm-eval check
//                                      (tests/peers/lm_eval_compare.py)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/file_util.h"
#include "infer/loglikelihood.h"
#include "infer/trained_model.h"
#include "model/decoder.h"
#include "repops/cross_entropy.h"
#include "repops/kernels.h"

namespace {
using namespace trail;

void EncodePairs(const infer::TrainedModel& m, const std::string& input, const std::string& out) {
  std::string lines;
  size_t at = 0;
  while (at < input.size()) {
    const size_t end = std::min(input.find('\n', at), input.size());
    const std::string line = input.substr(at, end - at);
    at = end + 1;
    if (line.empty()) continue;
    const nlohmann::json j = nlohmann::json::parse(line);
    const infer::EncodedRequest e =
        infer::EncodeRequest(m.tokenizer(), j.at("context").get<std::string>(),
                             j.at("continuation").get<std::string>(), m.contract().eos_id);
    lines += nlohmann::json{{"context", e.context}, {"continuation", e.continuation}}.dump() + "\n";
  }
  WriteFileAtomic(out + ".jsonl", lines);
}

void Probe(const infer::TrainedModel& m, const std::string& mode, const std::string& input,
           const std::string& out) {
  std::vector<int32_t> ids;
  if (mode == "text") {
    for (uint32_t id : m.tokenizer().Encode(input)) ids.push_back(static_cast<int32_t>(id));
    const size_t n = std::min<size_t>(256, static_cast<size_t>(m.config().max_seq_len));
    if (ids.size() > n) ids.resize(n);
  } else {
    ids = nlohmann::json::parse(input).get<std::vector<int32_t>>();
  }
  const int64_t n = static_cast<int64_t>(ids.size()), V = m.config().vocab_size;
  model::Decoder dec(m.config(), m.params(), m.backend(), n, n);
  std::vector<float> logits(n * V);
  m.backend().CopyToHost(dec.Extend(ids.data(), n, n), logits.data());
  std::vector<double> probs(n * V);
  for (int64_t t = 0; t < n; ++t) {
    const int32_t none = -1;
    float lse = 0;
    repops::CrossEntropyForward(m.backend().host_kernels(), logits.data() + t * V, &none, 1, V,
                                none, &lse);
    for (int64_t v = 0; v < V; ++v) {
      probs[t * V + v] = std::exp(static_cast<double>(logits[t * V + v] - lse));
    }
  }
  WriteFileAtomic(out + ".json", nlohmann::json{{"ids", ids}, {"vocab", V}}.dump());
  std::ofstream(out + ".probs", std::ios::binary)
      .write(reinterpret_cast<const char*>(probs.data()), probs.size() * sizeof(double));
  std::ofstream(out + ".logits", std::ios::binary)
      .write(reinterpret_cast<const char*>(logits.data()), logits.size() * sizeof(float));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: probe_for_test RUN text|ids|pairs FILE OUT\n");
    return 2;
  }
  try {
    const infer::TrainedModel m({argv[1], -1, "", {}});
    const std::string mode = argv[2], input = ReadFileToString(argv[3]), out = argv[4];
    if (mode == "pairs") {
      EncodePairs(m, input, out);
    } else {
      Probe(m, mode, input, out);
    }
  } catch (const Error& e) {
    std::fprintf(stderr, "probe_for_test: %s\n", e.what());
    return 3;
  }
  return 0;
}
