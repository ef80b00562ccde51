// Heuristic quality rules: Gopher quality and repetition (Rae et al. 2021, table A1), C4's
// document rules and FineWeb's, with datatrove's published thresholds as defaults. Every rule
// reports its measured value, its threshold and its verdict, so lineage can record why a
// document was kept or dropped; a document passes when every enabled rule passes.
//
// Words: maximal runs of non-space characters split into letter/digit runs and punctuation
// runs; a word is "real" when it is not only punctuation. (datatrove uses NLTK's tokenizer, so
// values on contractions and some punctuation differ slightly.) Duplicate n-gram character
// fractions follow the Gopher paper: characters of words covered by any n-gram that occurs more
// than once, each counted once.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace trail::corpus {

struct RuleResult {
  std::string_view rule;  // e.g. "gopher.min_doc_words" (static storage: no copy per document)
  double value = 0, threshold = 0;
  bool pass = true;
};

struct QualityConfig {
  // Gopher quality
  int min_doc_words = 50, max_doc_words = 100000;
  double min_avg_word_length = 3, max_avg_word_length = 10;
  double max_symbol_word_ratio = 0.1, max_bullet_lines_ratio = 0.9, max_ellipsis_lines_ratio = 0.3,
         min_alpha_words_ratio = 0.8;
  int min_stop_words = 2;
  std::vector<std::string> stop_words = {"the", "be", "to", "of", "and", "that", "have", "with"};
  // Gopher repetition (calibrated for web pages; short texts such as quotes trip it)
  bool repetition = true;
  double dup_line_frac = 0.3, dup_para_frac = 0.3, dup_line_char_frac = 0.2,
         dup_para_char_frac = 0.2;
  std::vector<std::pair<int, double>> top_ngram_char_frac = {{2, 0.2}, {3, 0.18}, {4, 0.16}};
  std::vector<std::pair<int, double>> dup_ngram_char_frac = {{5, 0.15}, {6, 0.14}, {7, 0.13},
                                                             {8, 0.12}, {9, 0.11}, {10, 0.10}};
  // C4 (document level)
  bool c4_lorem_ipsum = true, c4_curly_bracket = true;
  int c4_min_sentences = 5;
  // FineWeb
  double fineweb_line_punct_ratio = 0.12, fineweb_short_line_ratio = 0.67,
         fineweb_char_dup_ratio = 0.01, fineweb_newline_ratio = 0.3;
  int fineweb_short_line_length = 30;
};

std::vector<RuleResult> QualityRules(std::string_view text, const QualityConfig& cfg);
bool PassesAll(const std::vector<RuleResult>& rules);
// The first failing rule's name, or "" when all pass.
std::string FirstFailure(const std::vector<RuleResult>& rules);

}  // namespace trail::corpus
