// A byte-level BPE tokenizer: pre-tokenizer pattern + BPE model + special tokens.
//
// Text is bytes. Maximal runs of valid UTF-8 are normalized (none or NFC) and pre-tokenized with
// the pattern; a byte that is not part of valid UTF-8 is its own piece (so any byte string
// encodes, and without normalization decode(encode(x)) == x). Special tokens are recognized only
// when the caller allows them.
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/utf8.h"
#include "tokenizer/bpe.h"
#include "tokenizer/normalizer.h"
#include "tokenizer/pretokenizer.h"

namespace trail::tok {

struct SpecialToken {
  std::string text;
  uint32_t id = 0;
};

struct EncodeOptions {
  // Special tokens recognized in the text; all others are plain text...
  std::set<std::string> allowed_special;
  bool allow_all_special = false;
  // ...unless this is set: then text containing a special token that is not allowed is an error
  // (tiktoken's default for encode()).
  bool error_on_disallowed_special = false;
};

class Tokenizer {
 public:
  Tokenizer(std::string name, std::string pattern, BpeModel model,
            std::vector<SpecialToken> specials, Normalization normalization = Normalization::kNone);

  const std::string& name() const { return name_; }
  const std::string& pattern() const { return pretok_.pattern(); }
  // With NFC, valid UTF-8 runs are normalized before pre-tokenization, so decode(encode(x))
  // is NFC(x) (x itself for text already in NFC); invalid bytes are kept as they are.
  Normalization normalization() const { return normalization_; }
  const BpeModel& model() const { return model_; }
  const std::vector<SpecialToken>& specials() const { return specials_; }
  uint32_t vocab_size() const { return vocab_size_; }  // max id + 1, specials included
  // The id of a special token, or -1.
  int64_t SpecialId(std::string_view text) const;

  std::vector<uint32_t> Encode(std::string_view text, const EncodeOptions& opt = {}) const;
  // Special tokens are plain text.
  void EncodeOrdinary(std::string_view text, std::vector<uint32_t>& out) const;
  std::string Decode(std::span<const uint32_t> ids) const;  // unknown ids are an error

  // Encodes many texts on `threads` threads; the result does not depend on the thread count.
  std::vector<std::vector<uint32_t>> EncodeBatch(std::span<const std::string> texts, int threads,
                                                 const EncodeOptions& opt = {}) const;

 private:
  void EncodeText(std::string_view text, std::vector<uint32_t>& out) const;  // no specials
  void EncodeValidUtf8(std::string_view text, std::vector<uint32_t>& out) const;

  std::string name_;
  Pretokenizer pretok_;
  BpeModel model_;
  std::vector<SpecialToken> specials_;
  Normalization normalization_;
  std::vector<std::string> special_text_;  // by id - model size (for decoding)
  uint32_t vocab_size_ = 0;
  uint64_t serial_;  // identifies this tokenizer's per-thread piece caches
};

}  // namespace trail::tok
