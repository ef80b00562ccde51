// The tokenizer contract (tokenizer.contract.json): the frozen interface between the corpus and
// training. It pins the tokenizer artifact by SHA-256 and states the vocabulary size, the
// BOS/EOS/PAD ids, the normalization the artifact applies (none or nfc), byte
// fallback (byte-level BPE: every byte string encodes), the pre-tokenizer pattern, the Unicode
// version its character classes come from (tokenizer/unicode.h; checked on load) and the
// measured bytes per token on a stated sample. Its hash — SHA-256 of the file's bytes — is what
// token shards and data manifests record.
#pragma once

#include <memory>
#include <string>

#include "core/hash.h"
#include "tokenizer/tokenizer.h"

namespace trail::tok {

struct TokenizerContract {
  std::string artifact;  // path of the tokenizer file, relative to the contract's folder
  std::string artifact_sha256;
  std::string kind;  // tiktoken:<encoding> | gpt2 | tokenizer.json
  uint32_t vocab_size = 0;
  int64_t bos_id = -1, eos_id = -1, pad_id = -1;
  std::string normalization = "none";
  bool byte_fallback = true;
  std::string pattern;
  std::string unicode_version;        // of the pattern's character classes
  std::string sample, sample_sha256;  // what bytes/token was measured on
  uint64_t sample_bytes = 0, sample_tokens = 0;
  double bytes_per_token = 0;
};

// Builds a contract for the tokenizer at artifact_path (special tokens given by their text,
// empty for none), measuring bytes/token on sample_path.
TokenizerContract MakeContract(const std::string& artifact_path, const std::string& contract_dir,
                               const std::string& bos, const std::string& eos,
                               const std::string& pad, const std::string& sample_path);
std::string ContractToJson(const TokenizerContract& c);

struct LoadedContract {
  TokenizerContract contract;
  Digest hash;  // SHA-256 of the contract file
  std::unique_ptr<Tokenizer> tokenizer;
};
// Reads a contract, checks its format (v1 contracts, from before the classes were pinned, are
// refused), its Unicode version against UnicodeVersion(), the artifact against its SHA-256 and
// the tokenizer against the stated vocabulary and ids; every mismatch is an error naming the file.
LoadedContract LoadContract(const std::string& path);

}  // namespace trail::tok
