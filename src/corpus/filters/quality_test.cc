#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include "core/error.h"
#include "corpus/filters/quality.h"

namespace trail::corpus {
namespace {

const RuleResult& Rule(const std::vector<RuleResult>& rs, const std::string& name) {
  for (const RuleResult& r : rs) {
    if (r.rule == name) return r;
  }
  static RuleResult none{"missing", 0, 0, false};
  ADD_FAILURE() << "no rule " << name;
  return none;
}

const char* kProse =
    "The quick brown fox jumps over the lazy dog near the river bank. It was a bright and cold "
    "day in April, and the clocks were striking thirteen. Winston Smith, his chin nuzzled into "
    "his breast in an effort to escape the vile wind, slipped quickly through the glass doors of "
    "Victory Mansions. The hallway smelt of boiled cabbage and old rag mats. At one end of it a "
    "coloured poster, too large for indoor display, had been tacked to the wall. It depicted "
    "simply an enormous face, more than a metre wide: the face of a man of about forty-five, "
    "with a heavy black moustache and ruggedly handsome features.\n";

TEST(Quality, ProsePassesEveryRule) {
  const auto rs = QualityRules(kProse, {});
  EXPECT_TRUE(PassesAll(rs)) << FirstFailure(rs);
  EXPECT_GT(Rule(rs, "gopher.min_doc_words").value, 90);
  EXPECT_NEAR(Rule(rs, "gopher.min_avg_word_length").value, 4.3, 0.5);
}

TEST(Quality, EachRuleCatchesWhatItIsFor) {
  QualityConfig cfg;
  EXPECT_EQ(FirstFailure(QualityRules("Too short to be a document.", cfg)), "gopher.min_doc_words");
  std::string repeated;
  for (int i = 0; i < 30; ++i)
    repeated += "Buy cheap watches online today, best prices guaranteed.\n";
  const auto rep = QualityRules(repeated, cfg);
  EXPECT_FALSE(Rule(rep, "gopher.dup_line_frac").pass);
  EXPECT_NEAR(Rule(rep, "gopher.dup_line_frac").value, 29.0 / 30.0, 1e-9);
  EXPECT_FALSE(Rule(rep, "gopher.dup_10gram_char_frac").pass);
  EXPECT_FALSE(Rule(rep, "gopher.top_2gram_char_frac").pass);
  const auto lorem = QualityRules(std::string(kProse) + "Lorem ipsum dolor sit amet.", cfg);
  EXPECT_FALSE(Rule(lorem, "c4.lorem_ipsum").pass);
  EXPECT_FALSE(Rule(QualityRules(std::string(kProse) + "{x}", cfg), "c4.curly_bracket").pass);
  std::string hashes = kProse;
  for (int i = 0; i < 20; ++i) hashes += " #tag";
  EXPECT_FALSE(Rule(QualityRules(hashes, cfg), "gopher.hash_word_ratio").pass);
  std::string numbers;
  for (int i = 0; i < 100; ++i) numbers += std::to_string(i * 7919) + " ";
  EXPECT_FALSE(Rule(QualityRules(numbers, cfg), "gopher.alpha_words_ratio").pass);
  std::string lines;
  for (int i = 0; i < 60; ++i) lines += "item " + std::to_string(i) + "\n";
  const auto menu = QualityRules(lines, cfg);
  EXPECT_FALSE(Rule(menu, "fineweb.short_line_ratio").pass);
  EXPECT_FALSE(Rule(menu, "fineweb.newline_ratio").pass);
}

// The repetition fractions and the sentence count on texts small enough to count by hand. Words (2
// characters each, 29 characters with the spaces): aa bb cc aa bb dd ee aa bb cc.
// - 2-grams seen more than once start at words 0, 1, 3, 7, 8 ("aa bb" 3×, "bb cc" 2×); the words
//   they cover are 0-4 and 7-9: 8 words, 16 characters. The top one is "aa bb" (5 characters)
//   3 times: 15.
// - 3-grams: "aa bb cc" at 0 and 7 covers words 0-2 and 7-9: 12 characters.
TEST(Quality, RepetitionAndSentenceCountsMatchAHandCount) {
  QualityConfig cfg;
  cfg.top_ngram_char_frac = {{2, 1.0}};
  cfg.dup_ngram_char_frac = {{2, 1.0}, {3, 1.0}};
  const auto rs = QualityRules("aa bb cc aa bb dd ee aa bb cc", cfg);
  EXPECT_DOUBLE_EQ(Rule(rs, "gopher.top_2gram_char_frac").value, 15.0 / 29.0);
  EXPECT_DOUBLE_EQ(Rule(rs, "gopher.dup_2gram_char_frac").value, 16.0 / 29.0);
  EXPECT_DOUBLE_EQ(Rule(rs, "gopher.dup_3gram_char_frac").value, 12.0 / 29.0);
  EXPECT_DOUBLE_EQ(Rule(rs, "gopher.min_avg_word_length").value, 2.0);
  // A sentence ends at '.', '!' or '?' before white space or the end: not "Four.x".
  const auto ends = QualityRules("One. Two!\nThree?\tFour.x Five.", cfg);
  EXPECT_DOUBLE_EQ(Rule(ends, "c4.min_sentences").value, 4.0);
}

// The repeated n-gram fractions by brute force over the word strings: top (the most characters
// of one repeated n-gram, counted over its occurrences) and dup (the characters of the words that
// some occurrence of a repeated n-gram covers).
double TopNgramChars(const std::vector<std::string>& w, size_t n) {
  std::map<std::vector<std::string>, size_t> count;
  for (size_t i = 0; i + n <= w.size(); ++i) ++count[{w.begin() + i, w.begin() + i + n}];
  size_t best = 0;
  for (const auto& [gram, c] : count) {
    size_t chars = n - 1;
    for (const std::string& x : gram) chars += x.size();
    if (c > 1) best = std::max(best, chars * c);
  }
  return static_cast<double>(best);
}
double DupNgramChars(const std::vector<std::string>& w, size_t n) {
  std::map<std::vector<std::string>, size_t> count;
  for (size_t i = 0; i + n <= w.size(); ++i) ++count[{w.begin() + i, w.begin() + i + n}];
  std::vector<bool> covered(w.size());
  for (size_t i = 0; i + n <= w.size(); ++i) {
    if (count[{w.begin() + i, w.begin() + i + n}] > 1) std::fill_n(covered.begin() + i, n, true);
  }
  size_t chars = 0;
  for (size_t i = 0; i < w.size(); ++i) chars += covered[i] ? w[i].size() : 0;
  return static_cast<double>(chars);
}

// Every size, asked in ascending and in descending order, on texts whose longest repeat varies
// (the rules skip the sizes above one that repeats nothing: that must not change a value).
TEST(Quality, RepeatedNgramFractionsMatchABruteForceCountForEverySize) {
  std::mt19937 rng(7);
  const std::vector<std::string> vocab = {"a", "bb", "ccc", "dddd", "ee", "f", "ggg", "hhhhh"};
  for (int doc = 0; doc < 300; ++doc) {
    // A short vocabulary repeats small n-grams; a copied stretch makes one long repeat.
    std::vector<std::string> w;
    const size_t len = 1 + rng() % 40;
    for (size_t i = 0; i < len; ++i) {
      w.push_back(doc % 3 == 0 ? vocab[rng() % vocab.size()] + std::to_string(i)
                               : vocab[rng() % vocab.size()]);
    }
    if (doc % 2 == 1 && len > 6) {
      const size_t from = rng() % (len / 2), n = 1 + rng() % (len / 2);
      const std::vector<std::string> copy(w.begin() + from, w.begin() + std::min(len, from + n));
      w.insert(w.end(), copy.begin(), copy.end());
    }
    std::string text;
    for (const std::string& x : w) text += (text.empty() ? "" : " ") + x;
    for (bool ascending : {true, false}) {
      QualityConfig cfg;
      cfg.top_ngram_char_frac.clear(), cfg.dup_ngram_char_frac.clear();
      for (int n = 1; n <= 9; ++n) {
        const int size = ascending ? n : 10 - n;
        cfg.top_ngram_char_frac.push_back({size, 1.0});
        cfg.dup_ngram_char_frac.push_back({size, 1.0});
      }
      const auto rs = QualityRules(text, cfg);
      const double chars = static_cast<double>(text.size());
      for (size_t n = 1; n <= 9; ++n) {
        const std::string N = std::to_string(n);
        ASSERT_EQ(Rule(rs, "gopher.top_" + N + "gram_char_frac").value, TopNgramChars(w, n) / chars)
            << text << " (n = " << n << ")";
        ASSERT_EQ(Rule(rs, "gopher.dup_" + N + "gram_char_frac").value, DupNgramChars(w, n) / chars)
            << text << " (n = " << n << ")";
      }
    }
  }
}

// A document long enough that its n-grams are counted partition by partition (more than 32768),
// with repeats of every length: the same values as the brute-force count.
TEST(Quality, RepeatedNgramFractionsOfALongDocumentMatchABruteForceCount) {
  std::mt19937 rng(11);
  std::vector<std::string> w;
  while (w.size() < 50000) {
    if (w.size() > 100 && rng() % 4 == 0) {  // a copied stretch of 1..40 words
      const size_t n = 1 + rng() % 40, from = rng() % (w.size() - n);
      const std::vector<std::string> copy(w.begin() + from, w.begin() + from + n);
      w.insert(w.end(), copy.begin(), copy.end());
    } else {
      w.push_back("w" + std::to_string(rng() % 30000));
    }
  }
  std::string text;
  for (const std::string& x : w) text += (text.empty() ? "" : " ") + x;
  QualityConfig cfg;
  cfg.top_ngram_char_frac = {{2, 1.0}, {5, 1.0}};
  cfg.dup_ngram_char_frac = {{3, 1.0}, {10, 1.0}};
  const auto rs = QualityRules(text, cfg);
  const double chars = static_cast<double>(text.size());
  EXPECT_EQ(Rule(rs, "gopher.top_2gram_char_frac").value, TopNgramChars(w, 2) / chars);
  EXPECT_EQ(Rule(rs, "gopher.top_5gram_char_frac").value, TopNgramChars(w, 5) / chars);
  EXPECT_EQ(Rule(rs, "gopher.dup_3gram_char_frac").value, DupNgramChars(w, 3) / chars);
  EXPECT_EQ(Rule(rs, "gopher.dup_10gram_char_frac").value, DupNgramChars(w, 10) / chars);
  EXPECT_GT(Rule(rs, "gopher.dup_10gram_char_frac").value, 0.0);
  // The default sizes, ascending (2-4, then 5-10): each size counts only the positions whose
  // smaller n-grams repeat, partition by partition while there are more than 32768 of them.
  const auto ds = QualityRules(text, QualityConfig{});
  for (const auto& [n, frac] : QualityConfig{}.top_ngram_char_frac) {
    EXPECT_EQ(Rule(ds, "gopher.top_" + std::to_string(n) + "gram_char_frac").value,
              TopNgramChars(w, size_t(n)) / chars)
        << n;
  }
  for (const auto& [n, frac] : QualityConfig{}.dup_ngram_char_frac) {
    EXPECT_EQ(Rule(ds, "gopher.dup_" + std::to_string(n) + "gram_char_frac").value,
              DupNgramChars(w, size_t(n)) / chars)
        << n;
  }
}

TEST(Quality, AnNgramSizeBelowOneIsAnError) {
  QualityConfig cfg;
  cfg.dup_ngram_char_frac = {{5, 0.1}, {0, 0.1}};
  EXPECT_THROW(QualityRules("a b c d e f", cfg), Error);
}

TEST(Quality, RealTextKjvChaptersPassTheGopherQualityRules) {
  std::ifstream in(std::string(TRAIL_ASSETS_DIR) + "/text/kjv.txt");
  ASSERT_TRUE(in.good()) << "run scripts/fetch-assets.sh";
  std::vector<std::string> chapters;
  std::string line, cur;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    if (line[0] != ' ' && !cur.empty()) {  // a heading such as "Genesis 2" starts a chapter
      chapters.push_back(cur);
      cur.clear();
    }
    if (line[0] == ' ') cur += line + "\n";
  }
  chapters.push_back(cur);
  ASSERT_GT(chapters.size(), 1000u);
  int pass = 0;
  for (const std::string& c : chapters) {
    // The Bible repeats itself by design (genealogies, refrains); judge the Gopher quality rules.
    bool ok = true;
    for (const RuleResult& r : QualityRules(c, {})) {
      if (r.rule.rfind("gopher.", 0) == 0 && r.rule.find("dup_") == std::string::npos &&
          r.rule.find("top_") == std::string::npos) {
        ok = ok && r.pass;
      }
    }
    pass += ok;
  }
  std::printf("KJV: %d of %zu chapters pass the Gopher quality rules\n", pass, chapters.size());
  EXPECT_GT(pass, static_cast<int>(chapters.size() * 95 / 100));
}

}  // namespace
}  // namespace trail::corpus
