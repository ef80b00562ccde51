// `trail corpus build | tokenize | why`.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace trail::cli {

struct CorpusCommand {
  CLI::App *corpus = nullptr, *build = nullptr, *tokenize = nullptr, *why = nullptr;
  std::string config, out, key, contract;
  uint64_t shard_tokens = 100'000'000;
  int threads = 1;
  int64_t memory_budget_mb = 0;  // 0: the config's
  bool quiet = false;
};
void AddCorpusCommand(CLI::App& app, CorpusCommand& cmd);
int RunCorpusCommand(const CorpusCommand& cmd);

}  // namespace trail::cli
