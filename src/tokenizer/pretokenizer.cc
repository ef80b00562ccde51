#define PCRE2_CODE_UNIT_WIDTH 8
#include "tokenizer/pretokenizer.h"

#include <pcre2.h>

#include "core/error.h"
#include "tokenizer/pattern_rewrite.h"

namespace trail::tok {
namespace {

std::string PcreMessage(int code) {
  PCRE2_UCHAR buf[256];
  pcre2_get_error_message(code, buf, sizeof(buf));
  return reinterpret_cast<const char*>(buf);
}

}  // namespace

struct Pretokenizer::MatchState {
  pcre2_match_data* data = nullptr;
};

namespace {

// Each thread gets one match context with a JIT stack large enough for long runs of
// whitespace or punctuation (the default 32 KiB is not).
struct ThreadMatchContext {
  pcre2_match_context* ctx = nullptr;
  pcre2_jit_stack* stack = nullptr;
  ThreadMatchContext() {
    ctx = pcre2_match_context_create(nullptr);
    stack = pcre2_jit_stack_create(64 << 10, 64 << 20, nullptr);
    pcre2_jit_stack_assign(ctx, nullptr, stack);
  }
  ~ThreadMatchContext() {
    pcre2_jit_stack_free(stack);
    pcre2_match_context_free(ctx);
  }
};

pcre2_match_context* ThreadContext() {
  thread_local ThreadMatchContext t;
  return t.ctx;
}

}  // namespace

Pretokenizer::Pretokenizer(const std::string& pattern, PretokenizerEngine engine)
    : pattern_(pattern),
      scanner_(engine == PretokenizerEngine::kAuto ? ScannerFor(pattern) : ScannerKind::kNone) {
  if (scanner_ != ScannerKind::kNone) return;  // a known pattern: no regex needed
  const std::string rewritten = PinUnicodeClasses(pattern);
  int err = 0;
  PCRE2_SIZE off = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(rewritten.data()), rewritten.size(),
                                   PCRE2_UTF | PCRE2_NO_UTF_CHECK, &err, &off, nullptr);
  TRAIL_CHECK(code != nullptr, "pre-tokenizer pattern does not compile at offset ", off, ": ",
              PcreMessage(err), " (pattern: ", pattern, ")");
  pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);  // falls back to the interpreter if unavailable
  code_ = code;
}

Pretokenizer::~Pretokenizer() { pcre2_code_free(static_cast<pcre2_code*>(code_)); }

Pretokenizer::MatchStatePtr Pretokenizer::NewMatchState() const {
  MatchStatePtr s(new MatchState);
  s->data = pcre2_match_data_create(1, nullptr);
  return s;
}

void Pretokenizer::FreeMatchState::operator()(MatchState* s) const {
  pcre2_match_data_free(s->data);
  delete s;
}

bool Pretokenizer::Next(MatchState& st, std::string_view text, size_t start, size_t& begin,
                        size_t& end) const {
  // Text was checked to be valid UTF-8 by the caller (Tokenizer); invalid bytes are never
  // passed here.
  const int rc =
      pcre2_match(static_cast<pcre2_code*>(code_), reinterpret_cast<PCRE2_SPTR>(text.data()),
                  text.size(), start, PCRE2_NO_UTF_CHECK, st.data, ThreadContext());
  if (rc == PCRE2_ERROR_NOMATCH) return false;
  TRAIL_CHECK(rc >= 0, "pre-tokenizer match failed: ", PcreMessage(rc));
  const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(st.data);
  begin = ov[0];
  end = ov[1];
  return true;
}

std::vector<std::string_view> Pretokenizer::Pieces(std::string_view text) const {
  std::vector<std::string_view> out;
  Split(text, [&](std::string_view p) { out.push_back(p); });
  return out;
}

}  // namespace trail::tok
