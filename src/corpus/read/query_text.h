// A text someone asks about (`trail data find --text`) to the token ids the corpus factory
// would have trained on: normalized as the factory normalizes a UTF-8 document (NormalizeText
// with the default configuration: NFC, LF line ends, control characters other than tab and
// newline removed), then encoded with the tokenizer contract's ordinary encoding (no special
// tokens), as `trail corpus` tokenizes its shards.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace trail::corpus {

// The normalized text; throws trail::Error naming `where` for bytes that are not text (a NUL
// byte, or not UTF-8: convert the file first) and for a text with nothing but white space.
std::string NormalizeQueryText(std::string_view raw, const std::string& where);
// Its token ids (the same checks).
std::vector<uint32_t> QueryTokens(std::string_view raw, const tok::Tokenizer& tokenizer,
                                  const std::string& where);

}  // namespace trail::corpus
