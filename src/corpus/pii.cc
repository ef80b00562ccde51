#define PCRE2_CODE_UNIT_WIDTH 8
#include "corpus/pii.h"

#include <pcre2.h>

#include <cstdlib>
#include <memory>
#include <optional>
#include <vector>

#include "core/error.h"
#include "core/utf8.h"

namespace trail::corpus {
namespace {

class Regex {
 public:
  explicit Regex(const char* pattern) {
    int err = 0;
    PCRE2_SIZE off = 0;
    code_ = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern), PCRE2_ZERO_TERMINATED,
                          PCRE2_UTF | PCRE2_UCP | PCRE2_NO_UTF_CHECK, &err, &off, nullptr);
    TRAIL_CHECK(code_ != nullptr, "PII pattern does not compile at ", off, ": ", pattern);
    pcre2_jit_compile(code_, PCRE2_JIT_COMPLETE);
  }
  ~Regex() { pcre2_code_free(code_); }
  // Calls f(text, begin, end, ovector, rc) for each match; f returns the replacement, or
  // nullopt to keep the match.
  template <class F>
  std::string Replace(std::string_view s, F&& f) const {
    pcre2_match_data* md = pcre2_match_data_create_from_pattern(code_, nullptr);
    std::string out;
    size_t pos = 0, copied = 0;
    while (pos <= s.size()) {
      const int rc = pcre2_match(code_, reinterpret_cast<PCRE2_SPTR>(s.data()), s.size(), pos,
                                 PCRE2_NO_UTF_CHECK, md, nullptr);
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
    pcre2_match_data_free(md);
    out.append(s, copied, std::string_view::npos);
    return out;
  }

 private:
  pcre2_code* code_ = nullptr;
};

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
  if (a == 0 || a == 10 || a == 127 || a >= 224) return false;           // this, private, loopback, multicast+
  if (a == 169 && b == 254) return false;                                 // link-local
  if (a == 172 && b >= 16 && b <= 31) return false;                       // private
  if (a == 192 && b == 168) return false;                                 // private
  if (a == 100 && b >= 64 && b <= 127) return false;                      // carrier-grade NAT
  if (a == 192 && b == 0 && oct[2] == 2) return false;                    // documentation
  if (a == 198 && (b == 18 || b == 19)) return false;                     // benchmarking
  return true;
}

}  // namespace

PiiResult RedactPii(std::string_view text) {
  static const Regex email(R"([A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,})");
  static const Regex secret(
      R"(-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----)"
      R"(|\bAKIA[0-9A-Z]{16}\b|\bgh[pousr]_[A-Za-z0-9]{36,}\b|\bxox[abprs]-[A-Za-z0-9\-]{10,}\b)"
      R"(|(?i:\b(?:api[_\-]?key|secret[_\-]?key|access[_\-]?token|auth[_\-]?token|password)\b\s*[:=]\s*["']?)[A-Za-z0-9_\-+/=]{12,})");
  static const Regex ip(R"((?<![\d.])\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}(?![\d.]))");
  // Group 1: the cue and what follows it up to the number; group 2: a '+' country code. The
  // subscriber number is two groups of 3-4 digits (415-555-0123) or one of 5-8 (30 1234567).
  static const Regex phone(
      R"(((?i:\b(?:phone|tel|telephone|call|fax|mobile|cell)\b)[^\n\d+(]{0,12})?(\+\d{1,3}[\s.\-]?)?)"
      R"(\(?\d{2,4}\)?[\s.\-](?:\d{3,4}[\s.\-]\d{3,4}|\d{5,8})(?!\d))");
  // The patterns match with UTF-8 checks off (each match would otherwise check the whole
  // text again), which is undefined on invalid UTF-8: one check here instead.
  TRAIL_CHECK(IsValidUtf8(text), "PII redaction needs valid UTF-8 (normalize the text first)");
  PiiResult r;
  using Out = std::optional<std::string>;
  std::string s = secret.Replace(text, [&](std::string_view, size_t, size_t, const PCRE2_SIZE*, int) -> Out {
    ++r.counts.secret;
    return "<SECRET>";
  });
  s = email.Replace(s, [&](std::string_view, size_t, size_t, const PCRE2_SIZE*, int) -> Out {
    ++r.counts.email;
    return "<EMAIL>";
  });
  s = ip.Replace(s, [&](std::string_view v, size_t b, size_t e, const PCRE2_SIZE*, int) -> Out {
    if (!PublicIpv4(v.substr(b, e - b))) return std::nullopt;
    ++r.counts.ip;
    return "<IP_ADDRESS>";
  });
  // A phone number needs a cue: the keyword (kept in the text) or a '+' country code.
  s = phone.Replace(s, [&](std::string_view v, size_t b, size_t, const PCRE2_SIZE* ov,
                           int rc) -> Out {
    const bool cue = rc > 1 && ov[2] != PCRE2_UNSET;
    const bool plus = rc > 2 && ov[4] != PCRE2_UNSET;
    if (!cue && !plus) return std::nullopt;
    ++r.counts.phone;
    return (cue ? std::string(v.substr(b, ov[3] - b)) : std::string()) + "<PHONE>";
  });
  r.text = std::move(s);
  return r;
}

}  // namespace trail::corpus
