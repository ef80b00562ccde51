#include "corpus/langid.h"

#include <fasttext/fasttext.h>

#include <filesystem>
#include <sstream>
#include <vector>

#include "core/error.h"
#include "core/hash.h"

namespace trail::corpus {

LanguageIdentifier::LanguageIdentifier(const std::string& path, const std::string& sha256) {
  TRAIL_CHECK(std::filesystem::exists(path), path, ": language-ID model not found");
  const std::string got = ToHex(Sha256OfFile(path));
  TRAIL_CHECK(got == sha256, path, ": SHA-256 ", got, " is not the pinned ", sha256);
  model_ = std::make_unique<fasttext::FastText>();
  try {
    model_->loadModel(path);
  } catch (const std::exception& e) {
    TRAIL_FAIL(path, ": cannot load the fastText model: ", e.what());
  }
}

LanguageIdentifier::~LanguageIdentifier() = default;

std::vector<std::string> LanguageIdentifier::Languages() const {
  std::vector<std::string> out;
  const auto dict = model_->getDictionary();
  for (int32_t i = 0; i < dict->nlabels(); ++i) {
    std::string l = dict->getLabel(i);
    if (l.rfind("__label__", 0) == 0) l = l.substr(9);
    out.push_back(l);
  }
  return out;
}

LanguageGuess LanguageIdentifier::Identify(std::string_view text) const {
  std::string line(text);
  for (char& c : line) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  line += '\n';
  std::istringstream in(line);
  std::vector<std::pair<fasttext::real, std::string>> preds;
  model_->predictLine(in, preds, 1, 0.0);
  LanguageGuess g;
  if (preds.empty()) return g;
  std::string label = preds[0].second;
  const std::string prefix = "__label__";
  if (label.rfind(prefix, 0) == 0) label = label.substr(prefix.size());
  g.language = label;
  g.score = preds[0].first;
  return g;
}

}  // namespace trail::corpus
