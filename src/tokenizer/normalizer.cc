#include "tokenizer/normalizer.h"

#include <unicode/normalizer2.h>
#include <unicode/unistr.h>

#include "core/error.h"

namespace trail::tok {

const char* NormalizationName(Normalization n) { return n == Normalization::kNfc ? "nfc" : "none"; }

Normalization ParseNormalization(const std::string& name, const std::string& where) {
  if (name == "none") return Normalization::kNone;
  if (name == "nfc" || name == "NFC") return Normalization::kNfc;
  TRAIL_FAIL(where, ": normalization '", name, "' is not supported (none or nfc)");
}

std::string_view ToNfc(std::string_view utf8, std::string& scratch) {
  // ASCII is always NFC: skip ICU for it.
  size_t i = 0;
  while (i < utf8.size() && static_cast<unsigned char>(utf8[i]) < 0x80) ++i;
  if (i == utf8.size()) return utf8;
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* nfc = icu::Normalizer2::getNFCInstance(status);
  TRAIL_CHECK(U_SUCCESS(status), "ICU NFC normalizer unavailable: ", u_errorName(status));
  const icu::UnicodeString s = icu::UnicodeString::fromUTF8(
      icu::StringPiece(utf8.data(), static_cast<int32_t>(utf8.size())));
  if (nfc->isNormalized(s, status) && U_SUCCESS(status)) return utf8;
  status = U_ZERO_ERROR;
  const icu::UnicodeString out = nfc->normalize(s, status);
  TRAIL_CHECK(U_SUCCESS(status), "NFC normalization failed: ", u_errorName(status));
  scratch.clear();
  out.toUTF8String(scratch);
  return scratch;
}

}  // namespace trail::tok
