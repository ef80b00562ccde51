#include "cli/tokenizer_cmd.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>

#include "core/error.h"
#include "core/file_util.h"
#include "core/hash.h"
#include "tokenizer/loaders.h"

namespace trail::cli {
namespace {

using Json = nlohmann::ordered_json;

std::string ReadInput(const std::string& path) {
  if (path.empty() || path == "-") {
    return std::string(std::istreambuf_iterator<char>(std::cin), {});
  }
  return ReadFileToString(path);
}

void AppendIds(const std::vector<uint32_t>& ids, std::string& out) {
  out += '[';
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(ids[i]);
  }
  out += "]\n";
}

int RunInfo(const TokenizerOptions& o) {
  const auto t = tok::LoadTokenizer(o.tokenizer);
  Json specials = Json::object();
  for (const auto& s : t->specials()) specials[s.text] = s.id;
  const Json j{{"name", t->name()},
               {"vocab_size", t->vocab_size()},
               {"bpe_tokens", t->model().size()},
               {"merges", t->model().num_merges()},
               {"ignore_merges", t->model().ignore_merges()},
               {"pattern", t->pattern()},
               {"special_tokens", specials}};
  std::cout << j.dump(2) << "\n";
  return 0;
}

int RunEncode(const TokenizerOptions& o) {
  const auto t = tok::LoadTokenizer(o.tokenizer);
  const std::string text = ReadInput(o.input);
  tok::EncodeOptions opt;
  opt.allow_all_special = o.allow_special;
  std::string out;
  if (o.lines) {
    // One JSON array of ids per input line (the line without its '\n').
    std::vector<std::string> lines;
    for (size_t pos = 0; pos < text.size();) {
      size_t eol = text.find('\n', pos);
      if (eol == std::string::npos) eol = text.size();
      lines.emplace_back(text.substr(pos, eol - pos));
      pos = eol + 1;
    }
    const int threads = o.threads > 0 ? o.threads : 1;
    for (const auto& ids : t->EncodeBatch(lines, threads, opt)) AppendIds(ids, out);
  } else {
    AppendIds(t->Encode(text, opt), out);
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

int RunDecode(const TokenizerOptions& o) {
  const auto t = tok::LoadTokenizer(o.tokenizer);
  const std::string text = ReadInput(o.input);
  Json j;
  try {
    j = Json::parse(text);
  } catch (const Json::parse_error& e) {
    TRAIL_CHECK(false, "decode expects a JSON array of token ids: ", e.what());
  }
  TRAIL_CHECK(j.is_array(), "decode expects a JSON array of token ids");
  std::vector<uint32_t> ids;
  for (const Json& v : j) {
    TRAIL_CHECK(v.is_number_unsigned(), "token ids must be non-negative integers");
    ids.push_back(v.get<uint32_t>());
  }
  const std::string bytes = t->Decode(ids);
  std::fwrite(bytes.data(), 1, bytes.size(), stdout);
  return 0;
}

}  // namespace

void AddTokenizerCommand(CLI::App& app, TokenizerCommand& cmd) {
  TokenizerOptions& o = cmd.opt;
  cmd.tokenizer = app.add_subcommand("tokenizer", "Byte-level BPE tokenizers");
  cmd.tokenizer->require_subcommand(1);
  const char* path_help =
      "Tokenizer: a *.tiktoken rank file (named after its encoding), a tokenizer.json, or a "
      "directory with encoder.json + vocab.bpe";
  cmd.info = cmd.tokenizer->add_subcommand("info", "Vocabulary size, special tokens, pattern");
  cmd.info->add_option("--tokenizer", o.tokenizer, path_help)->required();

  cmd.encode = cmd.tokenizer->add_subcommand("encode", "Text to token ids (JSON)");
  cmd.encode->add_option("--tokenizer", o.tokenizer, path_help)->required();
  cmd.encode->add_option("--input", o.input, "Input file (default: standard input)");
  cmd.encode->add_flag("--lines", o.lines, "Encode each line separately; one JSON array per line");
  cmd.encode->add_flag("--allow-special", o.allow_special,
                       "Recognize special tokens in the text (default: they are plain text)");
  cmd.encode->add_option("--threads", o.threads, "Threads for --lines")->check(CLI::Range(1, 1024));

  cmd.decode = cmd.tokenizer->add_subcommand("decode", "A JSON array of token ids to bytes");
  cmd.decode->add_option("--tokenizer", o.tokenizer, path_help)->required();
  cmd.decode->add_option("--input", o.input, "Input file (default: standard input)");
}

int RunTokenizerCommand(const TokenizerCommand& cmd) {
  const TokenizerOptions& o = cmd.opt;
  if (*cmd.info) return RunInfo(o);
  if (*cmd.encode) return RunEncode(o);
  if (*cmd.decode) return RunDecode(o);
  return 0;
}

}  // namespace trail::cli
