// The corpus build configuration (TOML). Unknown keys anywhere are errors naming the key; so are
// missing required fields and out-of-range values.
//
//   seed = 2026
//   max_record_bytes = 33554432     # longer JSONL lines / WARC blocks are quarantined
//   memory_budget_mb = 1024         # the build's working memory (documents in flight, sort
//                                   # buffers, caches); the rest spills to <out>/.work
//   [[source]]                      # one or more
//   name = "fortunes-en"
//   format = "fortune"              # fortune ('%' records) | jsonl (dolma) | text (file = doc)
//                                   # | html (file = doc, main text extracted)
//                                   # | warc (.warc/.warc.gz, HTML responses extracted)
//   paths = ["/usr/share/games/fortunes/fortunes"]
//   encoding = "ISO-8859-3"         # optional: declared encoding when not UTF-8
//   esperanto_x_system = false
//   quota = 0                       # documents kept at most (0: all), smallest keys first
//   language_filter = true          # false: language still identified and recorded, never a drop
//   quality_filter = true           # false: rules still computed and recorded, never a drop
//                                   # (e.g. for code, which prose rules would reject)
//   [language]                      # optional: no section, no language ID
//   model = "lid.176.ftz"
//   allowed = ["en"]                # empty: any
//   min_score = 0.5
//   [quality]
//   enabled = true
//   min_doc_words = 50              # also max_doc_words, min_stop_words, c4_min_sentences,
//                                   # fineweb_line_punct_ratio
//   repetition = true               # Gopher repetition rules
//   [dedup]
//   ngram = 5  bands = 20  rows = 5  threshold = 0.8
//   [pii]
//   enabled = true
//   [decontamination]               # optional
//   eval_files = ["quiz.txt"]       # one evaluation item per line
//   ngram = 13
//   mode = "drop"                   # drop | cut
//   [split]
//   train = 0.98  validation = 0.01 # the rest is test
//   [output]
//   shard_documents = 10000
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "corpus/filters/quality.h"

namespace trail::corpus {

struct SourceConfig {
  std::string name, format = "jsonl", encoding;
  std::vector<std::string> paths;
  bool esperanto_x_system = false;
  uint64_t quota = 0;
  bool language_filter = true, quality_filter = true;
};

constexpr int64_t kMinMemoryBudgetMb = 8;

struct CorpusConfig {
  uint64_t seed = 0;
  uint64_t max_record_bytes = 32ull << 20;
  uint64_t memory_budget_bytes = 1024ull << 20;
  std::vector<SourceConfig> sources;
  bool language = false;
  std::string language_model;
  std::vector<std::string> allowed_languages;
  double min_language_score = 0.0;
  bool quality = true;
  QualityConfig quality_cfg;
  int ngram = 5, bands = 20, rows = 5;
  double near_threshold = 0.8;
  bool pii = true;
  std::vector<std::string> eval_files;
  int decontam_ngram = 13;
  bool decontam_cut = false;
  double train = 0.98, validation = 0.01;
  uint64_t shard_documents = 10000;
  std::string text;  // the config file as read (hashed into the lineage)
};

CorpusConfig LoadCorpusConfig(const std::string& path);

}  // namespace trail::corpus
