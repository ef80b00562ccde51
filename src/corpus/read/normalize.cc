#include "corpus/read/normalize.h"

#include <unicode/normalizer2.h>
#include <unicode/ucnv.h>
#include <unicode/ucsdet.h>
#include <unicode/unistr.h>

#include <vector>

#include "core/error.h"
#include "core/hash.h"
#include "core/utf8.h"

namespace trail::corpus {
namespace {

std::string Detect(std::string_view raw) {
  UErrorCode st = U_ZERO_ERROR;
  UCharsetDetector* det = ucsdet_open(&st);
  if (U_FAILURE(st)) return "ISO-8859-1";
  ucsdet_setText(det, raw.data(), static_cast<int32_t>(std::min<size_t>(raw.size(), 1 << 20)), &st);
  const UCharsetMatch* m = ucsdet_detect(det, &st);
  std::string name = "ISO-8859-1";
  if (U_SUCCESS(st) && m != nullptr) {
    const char* n = ucsdet_getName(m, &st);
    if (U_SUCCESS(st) && n != nullptr) name = n;
  }
  ucsdet_close(det);
  return name;
}

icu::UnicodeString Convert(std::string_view raw, const std::string& encoding, uint64_t* replaced) {
  UErrorCode st = U_ZERO_ERROR;
  UConverter* conv = ucnv_open(encoding.c_str(), &st);
  TRAIL_CHECK(U_SUCCESS(st), "unknown text encoding '", encoding, "'");
  icu::UnicodeString out(raw.data(), static_cast<int32_t>(raw.size()), conv, st);
  ucnv_close(conv);
  TRAIL_CHECK(U_SUCCESS(st), "cannot convert from ", encoding, ": ", u_errorName(st));
  for (int32_t i = 0; i < out.length(); ++i) *replaced += out[i] == 0xFFFD;
  return out;
}

void XSystem(icu::UnicodeString& s) {
  static const char16_t from[] = u"cCgGhHjJsSuU";
  static const char16_t to[] = u"ĉĈĝĜĥĤĵĴŝŜŭŬ";
  icu::UnicodeString out;
  for (int32_t i = 0; i < s.length(); ++i) {
    const char16_t c = s[i];
    if (i + 1 < s.length() && (s[i + 1] == u'x' || s[i + 1] == u'X')) {
      bool done = false;
      for (int k = 0; k < 12; ++k) {
        if (from[k] == c) {
          out.append(to[k]);
          ++i;
          done = true;
          break;
        }
      }
      if (done) continue;
    }
    out.append(c);
  }
  s = out;
}

}  // namespace

namespace {

const icu::Normalizer2& Nfc() {
  UErrorCode e = U_ZERO_ERROR;
  const icu::Normalizer2* nfc = icu::Normalizer2::getNFCInstance(e);
  TRAIL_CHECK(U_SUCCESS(e), "ICU NFC unavailable");
  return *nfc;
}

// The text as UTF-8, decoded (or detected and converted), x-system replaced and NFC-normalized.
// Valid UTF-8 that is already NFC (most text) is returned as it is, without the round trip
// through UTF-16: that round trip is the identity on it.
std::string NormalizedUtf8(std::string_view raw, const NormalizeConfig& cfg, NormalizeStats& st) {
  icu::UnicodeString u;
  if (IsValidUtf8(raw)) {
    st.encoding = "UTF-8";
    if (!cfg.esperanto_x_system) {
      UErrorCode e = U_ZERO_ERROR;
      const icu::StringPiece piece(raw.data(), static_cast<int32_t>(raw.size()));
      if (!cfg.nfc || (Nfc().isNormalizedUTF8(piece, e) && U_SUCCESS(e))) return std::string(raw);
    }
    u = icu::UnicodeString::fromUTF8(
        icu::StringPiece(raw.data(), static_cast<int32_t>(raw.size())));
  } else {
    st.encoding = cfg.declared_encoding.empty() ? Detect(raw) : cfg.declared_encoding;
    st.detected = cfg.declared_encoding.empty();
    u = Convert(raw, st.encoding, &st.replaced);
  }
  if (cfg.esperanto_x_system) XSystem(u);
  if (cfg.nfc) {
    UErrorCode e = U_ZERO_ERROR;
    u = Nfc().normalize(u, e);
    TRAIL_CHECK(U_SUCCESS(e), "NFC failed: ", u_errorName(e));
  }
  std::string utf8;
  u.toUTF8String(utf8);
  return utf8;
}

// Whether byte c needs a look in RemoveControls (CR, C0 and C1 controls other than LF and tab).
bool Special(unsigned char c) { return c < 0x20 || c == 0x7F || c == 0xC2; }

// CRLF and CR to LF; C0 controls but LF and tab, DEL and C1 controls (U+0080..U+009F)
// removed and counted. Runs of ordinary bytes are copied whole.
std::string RemoveControls(const std::string& utf8, uint64_t* removed) {
  std::string out;
  out.reserve(utf8.size());
  size_t i = 0;
  while (i < utf8.size()) {
    size_t j = i;
    while (j < utf8.size() &&
           (!Special(static_cast<unsigned char>(utf8[j])) || utf8[j] == '\n' || utf8[j] == '\t')) {
      ++j;
    }
    out.append(utf8, i, j - i);
    if (j == utf8.size()) break;
    const unsigned char c = utf8[j];
    i = j + 1;
    if (c == '\r') {
      out += '\n';
      if (i < utf8.size() && utf8[i] == '\n') ++i;
    } else if (c == 0xC2) {
      const unsigned char next = i < utf8.size() ? utf8[i] : 0;
      if (next >= 0x80 && next <= 0x9F) {
        ++*removed;  // C1 controls U+0080..U+009F
        ++i;
      } else {
        out += static_cast<char>(c);
      }
    } else {
      ++*removed;
    }
  }
  return out;
}

}  // namespace

std::string NormalizeText(std::string_view raw, const NormalizeConfig& cfg, NormalizeStats* stats) {
  NormalizeStats st;
  const std::string utf8 = NormalizedUtf8(raw, cfg, st);
  std::string out = RemoveControls(utf8, &st.controls_removed);
  if (stats != nullptr) *stats = st;
  return out;
}

std::string ContentHash(std::string_view text) {
  const Digest d = Sha256({reinterpret_cast<const uint8_t*>(text.data()), text.size()});
  return ToHex(d).substr(0, 32);
}

}  // namespace trail::corpus
