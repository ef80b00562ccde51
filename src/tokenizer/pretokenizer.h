// Pre-tokenization: splitting text into pieces with a tokenizer's regular expression, exactly as
// the reference implementations do.
//
// The pattern's character classes are pinned to trail's Unicode data (pattern_rewrite.h), so
// pieces never depend on the regex library's own Unicode tables. The patterns of the reference
// encodings run on hand-written scanners (scanner.h) that give the regex's pieces; every other
// pattern runs on PCRE2 with its JIT. Matching is leftmost-first; text between matches (never
// produced by the shipped patterns, whose last alternative matches anything) is emitted as its
// own piece.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/scanner.h"

namespace trail::tok {

enum class PretokenizerEngine {
  kAuto,   // the scanner when the pattern has one, else the regex
  kRegex,  // always the regex (the scanners' oracle in tests)
};

class Pretokenizer {
 public:
  explicit Pretokenizer(const std::string& pattern,
                        PretokenizerEngine engine = PretokenizerEngine::kAuto);
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
  ScannerKind scanner_ = ScannerKind::kNone;
  void* code_ = nullptr;  // pcre2_code*
};

}  // namespace trail::tok

#include "tokenizer/pretokenizer-inl.h"
