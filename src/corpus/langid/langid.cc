#include "corpus/langid/langid.h"

#include <filesystem>
#include <vector>

#include "core/error.h"
#include "core/hash.h"
#include "corpus/langid/fasttext_predict.h"

namespace trail::corpus {

LanguageIdentifier::LanguageIdentifier(const std::string& path, const std::string& sha256) {
  TRAIL_CHECK(std::filesystem::exists(path), path, ": language-ID model not found");
  const std::string got = ToHex(Sha256OfFile(path));
  TRAIL_CHECK(got == sha256, path, ": SHA-256 ", got, " is not the pinned ", sha256);
  model_ = std::make_unique<const ft::Predictor>(ft::LoadModel(path));
}

LanguageIdentifier::~LanguageIdentifier() = default;

std::vector<std::string> LanguageIdentifier::Languages() const {
  std::vector<std::string> out;
  for (int32_t i = 0; i < model_->num_labels(); ++i) {
    std::string l = model_->Label(i);
    if (l.rfind("__label__", 0) == 0) l = l.substr(9);
    out.push_back(l);
  }
  return out;
}

LanguageGuess LanguageIdentifier::Identify(std::string_view text) const {
  const std::vector<ft::Prediction> preds = model_->PredictText(text, 1);
  LanguageGuess g;
  if (preds.empty()) return g;
  std::string label = model_->Label(preds[0].label);
  const std::string prefix = "__label__";
  if (label.rfind(prefix, 0) == 0) label = label.substr(prefix.size());
  g.language = label;
  g.score = preds[0].score;
  return g;
}

}  // namespace trail::corpus
