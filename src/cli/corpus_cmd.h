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
  int64_t task = -1;       // a read task's number (with tasks)
  int64_t tasks = 0;       // > 0: a build in tasks (corpus/pipeline/task_records.h)
  int64_t near_tasks = 0;  // > 0: near dedup in hash-partitioned tasks (corpus/dedup/near_tasks.h)
  std::string phase;       // "read" or "final"; default: read with --task, final without
};
void AddCorpusCommand(CLI::App& app, CorpusCommand& cmd);
int RunCorpusCommand(const CorpusCommand& cmd);

}  // namespace trail::cli
