// `trail generate --run DIR [--step N] (--prompt TEXT | --prompt-file F) --max-tokens K
// [--temperature T] [--top-k K] [--top-p P] [--seed S] [--stop TEXT]… [--json]`: samples a
// continuation from a run's checkpoint (infer/generate.h). The text streams to stdout as it is
// produced; --json prints one object instead (ids, text, each token's log-probability as float32
// bits in hex).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace trail::cli {

struct GenerateCommand {
  CLI::App* generate = nullptr;
  std::string run, prompt, prompt_file, tokenizer, device = "cpu";
  int64_t step = -1, max_tokens = 64, top_k = 0;
  float temperature = 1.0f, top_p = 1.0f;
  uint64_t seed = 0;
  std::vector<std::string> stop;
  int threads = 0;
  bool json = false;
};
void AddGenerateCommand(CLI::App& app, GenerateCommand& cmd);
int RunGenerateCommand(const GenerateCommand& cmd);

}  // namespace trail::cli
