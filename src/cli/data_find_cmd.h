// `trail data index`, `trail data find` and `trail data verify-proof` (docs/data.md §9,
// docs/audit.md "Proofs about the training data"): build a manifest's find index; find where a
// text, a token sequence or a document key occurs in the training documents and at which steps a
// run trained on it, with a proof against its publication; check such a proof; audit a run's
// training data for evaluation items (`trail data contamination`).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace trail::cli {

struct DataFindOptions {
  std::string run, manifest, index, tokenizer;
  std::string text, tokens, key, jsonl;  // what to look for: exactly one
  int64_t steps = -1;                    // with --manifest: the steps trained
  uint64_t min_tokens = 50;
  uint32_t gram = 13, window = 38;
  bool json = false, no_verify = false;
  // find --proof: write a membership proof against the publication at --bundle
  std::string proof, bundle;
  bool absent = false;  // an absence proof instead
  bool near = false;    // with absent: of any near duplicate (the publication's band keys)
  // verify-proof
  std::string cache;
  std::vector<std::string> trust_publishers;
  std::string trainer_key;
  // contamination
  std::vector<std::string> tasks, items;
  std::string out;
  uint32_t ngram = 13;
};

struct DataFindCommand {
  CLI::App *index = nullptr, *find = nullptr, *verify_proof = nullptr, *contamination = nullptr;
  DataFindOptions opt;
  bool parsed() const;
};
void AddDataFindCommands(CLI::App& data, DataFindCommand& cmd);
int RunDataFindCommand(const DataFindCommand& cmd);

}  // namespace trail::cli
