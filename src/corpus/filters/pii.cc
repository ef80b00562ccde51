#define PCRE2_CODE_UNIT_WIDTH 8
#include "corpus/filters/pii.h"

#include <pcre2.h>

#include <cstdlib>
#include <memory>
#include <optional>
#include <vector>

#include "core/error.h"
#include "core/utf8.h"

namespace trail::corpus {
namespace {

// A cheap scan that finds where matches of a pattern can be: every match contains an anchor
// (at or after the match's start, at most `lookback` bytes after it), and find(s, from) returns
// the first anchor at or after `from` (npos: none). Plain text has few anchors, so the pattern
// runs only near them instead of being tried at every byte.
struct Prefilter {
  static constexpr size_t kUnbounded = SIZE_MAX;
  size_t (*find)(std::string_view s, size_t from) = nullptr;
  size_t lookback = kUnbounded;
};

class Regex {
 public:
  explicit Regex(const char* pattern, Prefilter prefilter = {}) : prefilter_(prefilter) {
    int err = 0;
    PCRE2_SIZE off = 0;
    code_ = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern), PCRE2_ZERO_TERMINATED,
                          PCRE2_UTF | PCRE2_UCP | PCRE2_NO_UTF_CHECK | PCRE2_USE_OFFSET_LIMIT, &err,
                          &off, nullptr);
    TRAIL_CHECK(code_ != nullptr, "PII pattern does not compile at ", off, ": ", pattern);
    pcre2_jit_compile(code_, PCRE2_JIT_COMPLETE);
  }
  ~Regex() { pcre2_code_free(code_); }
  // Calls f(text, begin, end, ovector, rc) for each match; f returns the replacement, or
  // nullopt to keep the match.
  // Without `prefiltered`, the pattern is tried at every byte (the reference for tests).
  template <class F>
  std::string Replace(std::string_view s, bool prefiltered, F&& f) const {
    pcre2_match_data* md = pcre2_match_data_create_from_pattern(code_, nullptr);
    pcre2_match_context* mc = pcre2_match_context_create(nullptr);
    std::string out;
    size_t pos = 0, copied = 0;
    while (pos <= s.size()) {
      const int rc = prefiltered ? Find(s, pos, md, mc) : Match(s, pos, PCRE2_UNSET, md, mc);
      if (rc < 0) break;
      const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
      const size_t b = ov[0], e = ov[1];
      const std::optional<std::string> repl = f(s, b, e, ov, rc);
      if (repl) {
        out.append(s, copied, b - copied);
        out += *repl;
        copied = e;
      }
      pos = e > b ? e : e + 1;
    }
    pcre2_match_context_free(mc);
    pcre2_match_data_free(md);
    out.append(s, copied, std::string_view::npos);
    return out;
  }

 private:
  // The leftmost match starting at or after pos (a character boundary), as one unlimited search
  // would find it. With a prefilter: no match starts in [from, a - lookback) when a is the
  // first anchor from `from` on, so the search starts there (moved back to a character's first
  // byte: PCRE2 must not start inside one) and is limited to starts up to a + lookback (or a);
  // if it finds nothing, the next round starts past that limit.
  int Find(std::string_view s, size_t pos, pcre2_match_data* md, pcre2_match_context* mc) const {
    if (prefilter_.find == nullptr) return Match(s, pos, PCRE2_UNSET, md, mc);
    const size_t lookback = prefilter_.lookback;
    for (size_t from = pos; from <= s.size();) {
      const size_t a = prefilter_.find(s, from);
      if (a == std::string_view::npos) return PCRE2_ERROR_NOMATCH;
      const bool bounded = lookback != Prefilter::kUnbounded;
      size_t start = bounded && a - from > lookback ? a - lookback : from;
      while (start > pos && start < s.size() && (s[start] & 0xC0) == 0x80) --start;
      const size_t limit = bounded ? a + lookback : a;
      const int rc = Match(s, start, limit, md, mc);
      if (rc != PCRE2_ERROR_NOMATCH) return rc;
      from = limit + 1;
    }
    return PCRE2_ERROR_NOMATCH;
  }
  int Match(std::string_view s, size_t start, PCRE2_SIZE limit, pcre2_match_data* md,
            pcre2_match_context* mc) const {
    pcre2_set_offset_limit(mc, limit);
    return pcre2_match(code_, reinterpret_cast<PCRE2_SPTR>(s.data()), s.size(), start,
                       PCRE2_NO_UTF_CHECK, md, mc);
  }

  pcre2_code* code_ = nullptr;
  Prefilter prefilter_;
};

// Bytes that may belong to a \d or \s match under PCRE2_UCP: the ASCII ones, and any byte of a
// multi-byte character (some of those are digits or spaces; all are let through).
bool MaybeDigit(unsigned char c) { return (c >= '0' && c <= '9') || c >= 0x80; }
bool MaybeSeparator(unsigned char c) {  // [\s.\-]
  return c == ' ' || (c >= '\t' && c <= '\r') || c == '.' || c == '-' || c >= 0x80;
}

// E-mail: its one '@' (the local part cannot hold one, so a match starting at or before the
// first '@' from `from` on holds that '@').
size_t FindAt(std::string_view s, size_t from) { return s.find('@', from); }

// IPv4: digit '.' digit (the end of the first number and the start of the second), at most
// 3 characters of 4 bytes after the match's start.
constexpr size_t kIpLookback = 16;
size_t FindDigitDotDigit(std::string_view s, size_t from) {
  for (size_t i = from; i + 2 < s.size(); ++i) {
    if (MaybeDigit(s[i]) && s[i + 1] == '.' && MaybeDigit(s[i + 2])) return i;
  }
  return std::string_view::npos;
}

// Phone: the last two bytes of the first digit group, an optional ')', a separator's first
// byte, and three more digit bytes (a multi-byte separator's other bytes pass as digits).
// Before them in a match: the cue (a word of up to 9 characters, then up to 12 characters),
// '+' and up to 3 digits and a separator, '(' and up to 2 more digits: with 4 bytes a
// character, under 128 bytes.
constexpr size_t kPhoneLookback = 128;
size_t FindPhoneDigits(std::string_view s, size_t from) {
  for (size_t i = from; i + 5 < s.size(); ++i) {
    if (!MaybeDigit(s[i]) || !MaybeDigit(s[i + 1])) continue;
    size_t j = i + 2;
    if (s[j] == ')') ++j;
    if (j + 3 < s.size() && MaybeSeparator(s[j]) && MaybeDigit(s[j + 1]) && MaybeDigit(s[j + 2]) &&
        MaybeDigit(s[j + 3])) {
      return i;
    }
  }
  return std::string_view::npos;
}

bool PublicIpv4(std::string_view s) {
  int oct[4], k = 0;
  size_t i = 0;
  while (k < 4) {
    int v = 0, digits = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      v = v * 10 + (s[i++] - '0');
      ++digits;
    }
    if (digits == 0 || digits > 3 || v > 255) return false;
    oct[k++] = v;
    if (k < 4) {
      if (i >= s.size() || s[i] != '.') return false;
      ++i;
    }
  }
  const int a = oct[0], b = oct[1];
  if (a == 0 || a == 10 || a == 127 || a >= 224)
    return false;                                       // this, private, loopback, multicast+
  if (a == 169 && b == 254) return false;               // link-local
  if (a == 172 && b >= 16 && b <= 31) return false;     // private
  if (a == 192 && b == 168) return false;               // private
  if (a == 100 && b >= 64 && b <= 127) return false;    // carrier-grade NAT
  if (a == 192 && b == 0 && oct[2] == 2) return false;  // documentation
  if (a == 198 && (b == 18 || b == 19)) return false;   // benchmarking
  return true;
}

PiiResult Redact(std::string_view text, bool prefiltered) {
  static const Regex email(
      R"([A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,})",
      {FindAt, Prefilter::kUnbounded});
  static const Regex secret(
      R"(-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----)"
      R"(|\bAKIA[0-9A-Z]{16}\b|\bgh[pousr]_[A-Za-z0-9]{36,}\b|\bxox[abprs]-[A-Za-z0-9\-]{10,}\b)"
      R"(|(?i:\b(?:api[_\-]?key|secret[_\-]?key|access[_\-]?token|auth[_\-]?token|password)\b\s*[:=]\s*["']?)[A-Za-z0-9_\-+/=]{12,})");
  static const Regex ip(R"((?<![\d.])\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}(?![\d.]))",
                        {FindDigitDotDigit, kIpLookback});
  // Group 1: the cue and what follows it up to the number; group 2: a '+' country code. The
  // subscriber number is two groups of 3-4 digits (415-555-0123) or one of 5-8 (30 1234567).
  static const Regex phone(
      R"(((?i:\b(?:phone|tel|telephone|call|fax|mobile|cell)\b)[^\n\d+(]{0,12})?(\+\d{1,3}[\s.\-]?)?)"
      R"(\(?\d{2,4}\)?[\s.\-](?:\d{3,4}[\s.\-]\d{3,4}|\d{5,8})(?!\d))",
      {FindPhoneDigits, kPhoneLookback});
  // The patterns match with UTF-8 checks off (each match would otherwise check the whole
  // text again), which is undefined on invalid UTF-8: one check here instead.
  TRAIL_CHECK(IsValidUtf8(text), "PII redaction needs valid UTF-8 (normalize the text first)");
  PiiResult r;
  using Out = std::optional<std::string>;
  std::string s = secret.Replace(
      text, prefiltered, [&](std::string_view, size_t, size_t, const PCRE2_SIZE*, int) -> Out {
        ++r.counts.secret;
        return "<SECRET>";
      });
  s = email.Replace(s, prefiltered,
                    [&](std::string_view, size_t, size_t, const PCRE2_SIZE*, int) -> Out {
                      ++r.counts.email;
                      return "<EMAIL>";
                    });
  s = ip.Replace(s, prefiltered,
                 [&](std::string_view v, size_t b, size_t e, const PCRE2_SIZE*, int) -> Out {
                   if (!PublicIpv4(v.substr(b, e - b))) return std::nullopt;
                   ++r.counts.ip;
                   return "<IP_ADDRESS>";
                 });
  // A phone number needs a cue: the keyword (kept in the text) or a '+' country code.
  s = phone.Replace(s, prefiltered,
                    [&](std::string_view v, size_t b, size_t, const PCRE2_SIZE* ov, int rc) -> Out {
                      const bool cue = rc > 1 && ov[2] != PCRE2_UNSET;
                      const bool plus = rc > 2 && ov[4] != PCRE2_UNSET;
                      if (!cue && !plus) return std::nullopt;
                      ++r.counts.phone;
                      return (cue ? std::string(v.substr(b, ov[3] - b)) : std::string()) +
                             "<PHONE>";
                    });
  r.text = std::move(s);
  return r;
}

}  // namespace

PiiResult RedactPii(std::string_view utf8) { return Redact(utf8, true); }

PiiResult RedactPiiExhaustive(std::string_view utf8) { return Redact(utf8, false); }

}  // namespace trail::corpus
