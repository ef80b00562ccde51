// Language identification with fastText's lid.176 model (176 languages). The model file is
// checked against its SHA-256 before loading. Text is scored as one line (newlines become
// spaces), as the model was trained, by trail's native fastText inference
// (corpus/langid/fasttext_predict.h), which gives libfasttext's labels and scores bit for bit.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace trail::corpus {
namespace ft {
class Predictor;
}

inline constexpr char kLid176Sha256[] =
    "8f3472cfe8738a7b6099e8e999c3cbfae0dcd15696aac7d7738a8039db603e83";

struct LanguageGuess {
  std::string language;  // ISO 639 code as the model labels it ("en", "de", ...), "" if none
  double score = 0;
};

class LanguageIdentifier {
 public:
  explicit LanguageIdentifier(const std::string& model_path,
                              const std::string& sha256 = kLid176Sha256);
  ~LanguageIdentifier();
  LanguageGuess Identify(std::string_view text) const;  // thread-safe
  std::vector<std::string> Languages() const;           // every label the model knows

 private:
  std::unique_ptr<const ft::Predictor> model_;
};

}  // namespace trail::corpus
