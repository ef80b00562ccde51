#include "corpus/read/query_text.h"

#include "core/error.h"
#include "core/utf8.h"
#include "corpus/read/normalize.h"

namespace trail::corpus {

std::string NormalizeQueryText(std::string_view raw, const std::string& where) {
  const size_t nul = raw.find('\0');
  TRAIL_CHECK(nul == std::string_view::npos, where, ": binary data (a NUL byte at offset ", nul,
              "), not text");
  const size_t valid = ValidUtf8Prefix(raw);
  TRAIL_CHECK(valid == raw.size(), where, ": not UTF-8 text (byte offset ", valid,
              "); convert it to UTF-8 first");
  const std::string text = NormalizeText(raw, NormalizeConfig{});
  TRAIL_CHECK(text.find_first_not_of(" \t\n\r\f\v") != std::string::npos, where,
              ": no text (empty, or only white space)");
  return text;
}

std::vector<uint32_t> QueryTokens(std::string_view raw, const tok::Tokenizer& tokenizer,
                                  const std::string& where) {
  std::vector<uint32_t> ids;
  tokenizer.EncodeOrdinary(NormalizeQueryText(raw, where), ids);
  return ids;
}

}  // namespace trail::corpus
