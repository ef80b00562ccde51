#include "cli/tokenizer_cmd.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>

#include "core/error.h"
#include "core/file_util.h"
#include "core/hash.h"
#include "ingest/documents.h"
#include "tokenizer/contract.h"
#include "tokenizer/loaders.h"
#include "tokenizer/trainer.h"

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
               {"normalization", tok::NormalizationName(t->normalization())},
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
  } catch (const Json::exception& e) {
    TRAIL_FAIL("decode expects a JSON array of token ids: ", e.what());
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

int RunTrain(const TokenizerOptions& o) {
  const std::vector<std::string> docs =
      ingest::ReadDocumentTexts(o.files, ingest::ParseDocumentFormat(o.input_format));
  tok::TrainOptions t;
  t.vocab_size = o.vocab_size;
  t.pattern = tok::NamedPattern(o.pattern);
  t.specials = o.specials;
  t.threads = o.threads > 0 ? o.threads : 1;
  t.normalization = tok::ParseNormalization(o.normalization, "--normalization");
  tok::TrainStats st;
  const auto trained = tok::TrainBpe(docs, t, &st);
  WriteFileAtomic(o.output, tok::ToHfTokenizerJson(*trained));
  std::fprintf(stderr,
               "trained on %llu documents, %.1f MB, %llu pieces (%llu distinct): %llu merges, "
               "vocabulary %u -> %s\n",
               (unsigned long long)st.documents, st.bytes / 1e6, (unsigned long long)st.pieces,
               (unsigned long long)st.unique_pieces, (unsigned long long)st.merges,
               trained->vocab_size(), o.output.c_str());
  return 0;
}

int RunContract(const TokenizerOptions& o) {
  const std::string dir = std::filesystem::path(o.output).parent_path().string();
  const tok::TokenizerContract c =
      tok::MakeContract(o.tokenizer, dir, o.bos, o.eos, o.pad, o.sample);
  const std::string json = tok::ContractToJson(c);
  WriteFileAtomic(o.output, json);
  const Digest h = Sha256({reinterpret_cast<const uint8_t*>(json.data()), json.size()});
  std::printf("%s  %s\n", ToHex(h).c_str(), o.output.c_str());
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

  cmd.train = cmd.tokenizer->add_subcommand(
      "train", "Train a byte-level BPE tokenizer; writes a Hugging Face tokenizer.json");
  cmd.train
      ->add_option("--input", o.files, "Text files (each one document) or dolma *.jsonl[.gz|.zst]")
      ->required();
  cmd.train
      ->add_option("--input-format", o.input_format,
                   "auto (JSONL by the .jsonl[.gz|.zst] suffix, else one document per "
                   "file), jsonl or text")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "jsonl", "text"}));
  cmd.train->add_option("--vocab-size", o.vocab_size, "Vocabulary size, specials included")
      ->required()
      ->check(CLI::Range(257u, 1u << 24));
  cmd.train->add_option("--pattern", o.pattern, "Pre-tokenizer: gpt2, cl100k, o200k or a regex")
      ->capture_default_str();
  cmd.train->add_option("--normalization", o.normalization, "none or nfc")
      ->capture_default_str()
      ->check(CLI::IsMember({"none", "nfc"}));
  cmd.train->add_option("--special", o.specials, "Special token (repeatable), e.g. <|endoftext|>");
  cmd.train->add_option("--threads", o.threads, "Threads for counting")->check(CLI::Range(1, 1024));
  cmd.train->add_option("--output", o.output, "tokenizer.json to write")->required();

  cmd.contract = cmd.tokenizer->add_subcommand(
      "contract",
      "Write tokenizer.contract.json (artifact hash, ids, pattern, bytes/token) and "
      "print its hash");
  cmd.contract->add_option("--tokenizer", o.tokenizer, path_help)->required();
  cmd.contract->add_option("--bos", o.bos, "BOS special token text");
  cmd.contract->add_option("--eos", o.eos, "EOS special token text");
  cmd.contract->add_option("--pad", o.pad, "PAD special token text");
  cmd.contract->add_option("--sample", o.sample, "Text to measure bytes per token on");
  cmd.contract->add_option("--output", o.output, "Contract file to write")->required();
}

int RunTokenizerCommand(const TokenizerCommand& cmd) {
  const TokenizerOptions& o = cmd.opt;
  if (*cmd.info) return RunInfo(o);
  if (*cmd.encode) return RunEncode(o);
  if (*cmd.decode) return RunDecode(o);
  if (*cmd.train) return RunTrain(o);
  if (*cmd.contract) return RunContract(o);
  return 0;
}

}  // namespace trail::cli
