// Reading and writing tokenizer files: tiktoken rank files (with the published encodings'
// patterns and special tokens), GPT-2's encoder.json + vocab.bpe, and Hugging Face
// tokenizer.json for byte-level BPE models. Every malformed or unsupported file is an error
// that names the file (and the line, where there is one).
#pragma once

#include <memory>
#include <string>

#include "tokenizer/tokenizer.h"

namespace trail::tok {

// A published tiktoken encoding: r50k_base, p50k_base, p50k_edit, cl100k_base, o200k_base.
struct TiktokenEncoding {
  std::string name, pattern, file, sha256;  // file: the rank file it reads
  std::vector<SpecialToken> specials;
  size_t ranks = 0;  // mergeable tokens in the rank file
};
const TiktokenEncoding* FindTiktokenEncoding(const std::string& name);

// Loads `name` from its rank file. The file's SHA-256 must match the encoding's pin unless
// verify_pin is false.
std::unique_ptr<Tokenizer> LoadTiktoken(const std::string& name, const std::string& rank_file,
                                        bool verify_pin = true);
std::unique_ptr<Tokenizer> LoadGpt2(const std::string& encoder_json, const std::string& vocab_bpe);
std::unique_ptr<Tokenizer> LoadHfTokenizerJson(const std::string& path);
// Loads any of the above from a path: *.tiktoken (name from the file name), a directory or
// file of GPT-2's pair, or a tokenizer.json.
std::unique_ptr<Tokenizer> LoadTokenizer(const std::string& path);

// Writes a Hugging Face tokenizer.json (BPE model, Split+ByteLevel pre-tokenizer, ByteLevel
// decoder, special tokens as added tokens); merges are written in rank order.
std::string ToHfTokenizerJson(const Tokenizer& t);

// GPT-2's printable stand-ins for bytes, used by encoder.json, vocab.bpe and tokenizer.json.
std::string BytesToByteLevel(std::string_view bytes);
std::string ByteLevelToBytes(std::string_view text, const std::string& where);

}  // namespace trail::tok
