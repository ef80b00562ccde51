// `trail tokenizer info | encode | decode | train`.
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace trail::cli {

struct TokenizerOptions {
  std::string tokenizer, input, output;
  bool lines = false, allow_special = false;
  // train
  std::vector<std::string> files;
  std::string input_format = "auto";  // auto | jsonl | text (ingest::DocumentFormat)
  uint32_t vocab_size = 0;
  int threads = 0;
  std::string pattern = "cl100k";
  std::string normalization = "none";
  std::vector<std::string> specials;
  // contract
  std::string bos, eos, pad, sample;
};

struct TokenizerCommand {
  CLI::App *tokenizer = nullptr, *info = nullptr, *encode = nullptr, *decode = nullptr,
           *train = nullptr, *contract = nullptr;
  TokenizerOptions opt;
};
void AddTokenizerCommand(CLI::App& app, TokenizerCommand& cmd);
int RunTokenizerCommand(const TokenizerCommand& cmd);

}  // namespace trail::cli
