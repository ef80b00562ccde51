// Text normalization before pre-tokenization: none (bytes as given) or Unicode NFC (ICU).
#pragma once

#include <string>
#include <string_view>

namespace trail::tok {

enum class Normalization { kNone, kNfc };

const char* NormalizationName(Normalization n);
Normalization ParseNormalization(const std::string& name, const std::string& where);

// NFC of valid UTF-8 text. Text that is already NFC (checked quickly) is returned unchanged
// without copying into `scratch`; otherwise the normalized text is written there.
std::string_view ToNfc(std::string_view utf8, std::string& scratch);

}  // namespace trail::tok
