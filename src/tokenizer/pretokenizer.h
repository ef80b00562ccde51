// Pre-tokenization: splitting text into pieces with a tokenizer's regular expression, exactly as
// the reference implementations do (PCRE2 with its JIT, UTF + Unicode properties).
//
// The references (tiktoken's fancy-regex, Hugging Face's onig) define \s as Unicode White_Space;
// PCRE2's \s also matches U+180E, so the pattern is rewritten to use an explicit White_Space
// class. Matching is leftmost-first; text between matches (never produced by the shipped
// patterns, whose last alternative matches anything) is emitted as its own piece.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace trail::tok {

class Pretokenizer {
 public:
  explicit Pretokenizer(const std::string& pattern);
  ~Pretokenizer();
  Pretokenizer(const Pretokenizer&) = delete;
  Pretokenizer& operator=(const Pretokenizer&) = delete;

  const std::string& pattern() const { return pattern_; }
  // Calls emit(piece) for each piece of text, in order; the pieces concatenate to text.
  // Thread-safe: each call uses its own match state.
  template <class F>
  void Split(std::string_view text, F&& emit) const;

  // The pieces as a vector (for tests and tools).
  std::vector<std::string_view> Pieces(std::string_view text) const;

 private:
  struct MatchState;
  struct FreeMatchState {
    void operator()(MatchState* st) const;
  };
  using MatchStatePtr = std::unique_ptr<MatchState, FreeMatchState>;
  // Next match at or after `start`: sets [begin, end); returns false when there is none.
  bool Next(MatchState& st, std::string_view text, size_t start, size_t& begin, size_t& end) const;
  MatchStatePtr NewMatchState() const;  // per call, so Split is thread-safe

  std::string pattern_;
  void* code_ = nullptr;  // pcre2_code*
};

// Rewrites \s, \S and [...\s...] to the Unicode White_Space set (see above).
std::string RewriteWhitespaceClasses(const std::string& pattern);

}  // namespace trail::tok

#include "tokenizer/pretokenizer-inl.h"
