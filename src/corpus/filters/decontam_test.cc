#include <gtest/gtest.h>

#include <dirent.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "corpus/filters/decontam.h"
#include "corpus/read/fortune.h"

namespace trail::corpus {
namespace {

std::string Words(int from, int count) {  // "w<from> w<from+1> ..."
  std::string s;
  for (int i = 0; i < count; ++i) s += (i ? " w" : "w") + std::to_string(from + i);
  return s;
}

TEST(Decontam, ShortItemsAreCountedNotIndexed) {
  const ContaminationIndex idx({{"b", "1", Words(0, 13)}, {"b", "2", "Alabama Montgomery"}}, 13);
  EXPECT_EQ(idx.indexed_items(), 1u);
  EXPECT_EQ(idx.short_items(), 1u);
  EXPECT_TRUE(idx.Find("We went to Alabama Montgomery today").empty());
  EXPECT_EQ(idx.Find("x " + Words(0, 13) + " y").size(), 1u);
  EXPECT_TRUE(idx.Find("x " + Words(0, 12) + " y").empty());  // 12 of 13 words: no match
  // Normalized words: case and punctuation do not hide an overlap.
  std::string shouted = Words(0, 13);
  std::transform(shouted.begin(), shouted.end(), shouted.begin(), ::toupper);
  EXPECT_EQ(idx.Find(shouted + "!!!").size(), 1u);
}

TEST(Decontam, Gpt3CutRules) {
  const ContaminationIndex idx({{"b", "1", Words(1000, 13)}}, 13);
  const std::string filler_a(600, 'a'), filler_b(300, 'b');
  const std::string doc = filler_a + " " + Words(1000, 13) + " " + filler_b;
  DecontamConfig drop;
  EXPECT_TRUE(Decontaminate(doc, idx, drop).dropped);
  DecontamConfig cut;
  cut.cut = true;
  const DecontamOutcome o = Decontaminate(doc, idx, cut);
  ASSERT_FALSE(o.dropped);
  // 200 characters on each side of the match go; the 300-char tail loses 201 (the space and
  // 200 more) and the remaining 99 are under 200, so only the head survives, minus 200.
  EXPECT_EQ(o.text, std::string(401, 'a'));
  // A document cut into more than 10 pieces is dropped.
  std::string many;
  for (int i = 0; i < 11; ++i) many += std::string(700, 'x') + " " + Words(1000, 13) + " ";
  many += std::string(700, 'x');
  EXPECT_TRUE(Decontaminate(many, idx, cut).dropped);
  EXPECT_EQ(Decontaminate("clean text", idx, cut).text, "clean text");
}

// bsdgames quiz files: records "field:field:..." with '\' continuation lines and {optional}
// text; an item's text is its fields joined by spaces, optional parts included.
std::vector<EvalItem> ReadQuiz() {
  std::vector<EvalItem> items;
  const std::string dir = "/usr/share/games/bsdgames/quiz";
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return items;
  std::vector<std::string> files;
  while (dirent* e = readdir(d)) {
    if (e->d_type == DT_REG && std::string(e->d_name) != "index") files.push_back(e->d_name);
  }
  closedir(d);
  std::sort(files.begin(), files.end());
  for (const std::string& f : files) {
    std::ifstream in(dir + "/" + f);
    std::string line, rec;
    int n = 0;
    while (std::getline(in, line)) {
      const bool more = !line.empty() && line.back() == '\\';
      rec += more ? line.substr(0, line.size() - 1) : line;
      if (more) continue;
      std::string text;
      for (char c : rec) text += (c == ':' ? ' ' : (c == '{' || c == '}' || c == '|') ? ' ' : c);
      items.push_back({"quiz/" + f, std::to_string(n++), text});
      rec.clear();
    }
  }
  return items;
}

// Lowercase ASCII words joined by single spaces, framed by spaces: " w1 w2 ... ".
std::string Normalized(const std::string& s) {
  std::string out = " ";
  bool in = false;
  for (unsigned char c : s) {
    if (std::isalnum(c)) {
      out += static_cast<char>(std::tolower(c));
      in = true;
    } else if (in) {
      out += ' ';
      in = false;
    }
  }
  if (in) out += ' ';
  return out;
}

TEST(Decontam, QuizAgainstEnglishFortunesFlagsExactlyTheVerbatimOverlaps) {
  const std::vector<EvalItem> items = ReadQuiz();
  ASSERT_GT(items.size(), 1000u) << "bsdgames quiz files missing: run scripts/install-deps.sh";
  const ContaminationIndex idx(items, 13);
  // English fortune records, ASCII only (so the reference below normalizes them identically).
  std::vector<std::string> docs, names;
  DIR* d = opendir("/usr/share/games/fortunes");
  ASSERT_NE(d, nullptr);
  std::vector<std::string> files;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (e->d_type == DT_REG && name.find('.') == std::string::npos) files.push_back(name);
  }
  closedir(d);
  std::sort(files.begin(), files.end());
  for (const std::string& f : files) {
    std::ifstream in("/usr/share/games/fortunes/" + f);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string all = ss.str();
    for (const FortuneRecord& r : FortuneRecords(all)) {
      if (std::all_of(r.text.begin(), r.text.end(), [](unsigned char c) { return c < 0x80; })) {
        docs.emplace_back(r.text);
        names.push_back(f + ":" + std::to_string(r.index));
      }
    }
  }
  // Reference: every 13-word window of every long item searched as a string in every document.
  std::vector<std::vector<std::string>> windows(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    std::vector<std::string> w;
    std::istringstream ws(Normalized(items[i].text));
    for (std::string x; ws >> x;) w.push_back(x);
    for (size_t k = 0; k + 13 <= w.size(); ++k) {
      std::string g = " ";
      for (size_t j = 0; j < 13; ++j) g += w[k + j] + " ";
      windows[i].push_back(g);
    }
  }
  std::set<std::pair<size_t, size_t>> want, got;
  for (size_t d = 0; d < docs.size(); ++d) {
    const std::string norm = Normalized(docs[d]);
    for (size_t i = 0; i < items.size(); ++i) {
      for (const std::string& g : windows[i]) {
        if (norm.find(g) != std::string::npos) {
          want.insert({d, i});
          break;
        }
      }
    }
    for (const ContaminationHit& h : idx.Find(docs[d])) {
      // The index keeps the first item per n-gram; the reference may name another item with the
      // same n-gram, so compare on (document, n-gram text).
      got.insert({d, h.item});
    }
  }
  std::set<size_t> want_docs, got_docs;
  for (const auto& p : want) want_docs.insert(p.first);
  for (const auto& p : got) got_docs.insert(p.first);
  std::printf(
      "quiz: %zu items (%zu indexed, %zu shorter than 13 words); fortunes: %zu ASCII "
      "records; contaminated: %zu\n",
      items.size(), idx.indexed_items(), idx.short_items(), docs.size(), got_docs.size());
  for (const auto& [d, i] : got) {
    std::printf("  %s  <- %s #%s\n", names[d].c_str(), items[i].benchmark.c_str(),
                items[i].id.c_str());
  }
  EXPECT_EQ(got_docs, want_docs);  // flags the verbatim overlaps, and nothing else
  EXPECT_GE(got_docs.size(), 3u);  // poetry lines quoted in songs-poems, literature, startrek
}

}  // namespace
}  // namespace trail::corpus
