#include "corpus/pipeline/config.h"

#include <set>

#include "core/error.h"
#include "core/file_util.h"
#include "core/toml_text.h"

namespace trail::corpus {
namespace {

void AllowOnly(const toml::table& t, std::initializer_list<const char*> keys,
               const std::string& where, const std::string& file) {
  const std::set<std::string> ok(keys.begin(), keys.end());
  for (const auto& [k, v] : t) {
    TRAIL_CHECK(ok.count(std::string(k.str())) == 1, file, ": unknown key '", k.str(), "' in ",
                where);
  }
}

template <class T>
T Get(const toml::table& t, const char* key, T dflt, const std::string& where,
      const std::string& file) {
  const toml::node* n = t.get(key);
  if (n == nullptr) return dflt;
  const std::optional<T> v = n->value<T>();
  TRAIL_CHECK(v.has_value(), file, ": ", where, ".", key, " has the wrong type");
  return *v;
}

std::vector<std::string> Strings(const toml::table& t, const char* key, const std::string& where,
                                 const std::string& file) {
  std::vector<std::string> out;
  const toml::node* n = t.get(key);
  if (n == nullptr) return out;
  const toml::array* a = n->as_array();
  TRAIL_CHECK(a != nullptr, file, ": ", where, ".", key, " must be an array of strings");
  for (const toml::node& e : *a) {
    const std::optional<std::string> s = e.value<std::string>();
    TRAIL_CHECK(s.has_value(), file, ": ", where, ".", key, " must hold strings");
    out.push_back(*s);
  }
  return out;
}

const toml::table* Section(const toml::table& root, const char* name, const std::string& file) {
  const toml::node* n = root.get(name);
  if (n == nullptr) return nullptr;
  TRAIL_CHECK(n->is_table(), file, ": [", name, "] must be a table");
  return n->as_table();
}

// seed, max_record_bytes, memory_budget_mb.
void ReadLimits(const toml::table& root, const std::string& path, CorpusConfig& c) {
  c.seed = static_cast<uint64_t>(Get<int64_t>(root, "seed", 0, "top", path));
  const int64_t max_record =
      Get<int64_t>(root, "max_record_bytes", static_cast<int64_t>(c.max_record_bytes), "top", path);
  TRAIL_CHECK(max_record > 0, path, ": max_record_bytes must be > 0");
  c.max_record_bytes = static_cast<uint64_t>(max_record);
  const int64_t budget_mb = Get<int64_t>(
      root, "memory_budget_mb", static_cast<int64_t>(c.memory_budget_bytes >> 20), "top", path);
  TRAIL_CHECK(budget_mb >= kMinMemoryBudgetMb, path, ": memory_budget_mb must be at least ",
              kMinMemoryBudgetMb);
  c.memory_budget_bytes = static_cast<uint64_t>(budget_mb) << 20;
}

// [[source]]: at least one, each with a unique name.
void ReadSources(const toml::table& root, const std::string& path, CorpusConfig& c) {
  const toml::array* srcs = root.get("source") ? root.get("source")->as_array() : nullptr;
  TRAIL_CHECK(srcs != nullptr && !srcs->empty(), path, ": at least one [[source]] is needed");
  std::set<std::string> names;
  for (size_t i = 0; i < srcs->size(); ++i) {
    const toml::table* t = (*srcs)[i].as_table();
    const std::string where = "source[" + std::to_string(i) + "]";
    TRAIL_CHECK(t != nullptr, path, ": ", where, " must be a table");
    AllowOnly(*t,
              {"name", "format", "paths", "encoding", "esperanto_x_system", "quota",
               "language_filter", "quality_filter"},
              where, path);
    SourceConfig s;
    s.name = Get<std::string>(*t, "name", "", where, path);
    TRAIL_CHECK(!s.name.empty() && names.insert(s.name).second, path, ": ", where,
                " needs a unique name");
    s.format = Get<std::string>(*t, "format", "jsonl", where, path);
    TRAIL_CHECK(s.format == "jsonl" || s.format == "fortune" || s.format == "text" ||
                    s.format == "html" || s.format == "warc",
                path, ": ", where, ".format must be jsonl, warc, fortune, text or html");
    s.paths = Strings(*t, "paths", where, path);
    TRAIL_CHECK(!s.paths.empty(), path, ": ", where, ".paths is empty");
    s.encoding = Get<std::string>(*t, "encoding", "", where, path);
    s.esperanto_x_system = Get<bool>(*t, "esperanto_x_system", false, where, path);
    s.quota = static_cast<uint64_t>(Get<int64_t>(*t, "quota", 0, where, path));
    s.language_filter = Get<bool>(*t, "language_filter", true, where, path);
    s.quality_filter = Get<bool>(*t, "quality_filter", true, where, path);
    c.sources.push_back(std::move(s));
  }
}

// [language] and [quality]: the filters and their thresholds.
void ReadLanguageAndQuality(const toml::table& root, const std::string& path, CorpusConfig& c) {
  if (const toml::table* t = Section(root, "language", path)) {
    AllowOnly(*t, {"model", "allowed", "min_score"}, "[language]", path);
    c.language = true;
    c.language_model = Get<std::string>(*t, "model", "", "language", path);
    TRAIL_CHECK(!c.language_model.empty(), path, ": [language] needs model");
    c.allowed_languages = Strings(*t, "allowed", "language", path);
    c.min_language_score = Get<double>(*t, "min_score", 0.0, "language", path);
  }
  if (const toml::table* t = Section(root, "quality", path)) {
    AllowOnly(*t,
              {"enabled", "min_doc_words", "max_doc_words", "min_stop_words", "repetition",
               "c4_min_sentences", "fineweb_line_punct_ratio"},
              "[quality]", path);
    c.quality_cfg.repetition = Get<bool>(*t, "repetition", true, "quality", path);
    c.quality_cfg.fineweb_line_punct_ratio = Get<double>(
        *t, "fineweb_line_punct_ratio", c.quality_cfg.fineweb_line_punct_ratio, "quality", path);
    c.quality_cfg.c4_min_sentences = static_cast<int>(
        Get<int64_t>(*t, "c4_min_sentences", c.quality_cfg.c4_min_sentences, "quality", path));
    c.quality = Get<bool>(*t, "enabled", true, "quality", path);
    c.quality_cfg.min_doc_words = static_cast<int>(
        Get<int64_t>(*t, "min_doc_words", c.quality_cfg.min_doc_words, "quality", path));
    c.quality_cfg.max_doc_words = static_cast<int>(
        Get<int64_t>(*t, "max_doc_words", c.quality_cfg.max_doc_words, "quality", path));
    c.quality_cfg.min_stop_words = static_cast<int>(
        Get<int64_t>(*t, "min_stop_words", c.quality_cfg.min_stop_words, "quality", path));
  }
}

// [dedup], [pii] and [decontamination].
void ReadDedupPiiAndDecontamination(const toml::table& root, const std::string& path,
                                    CorpusConfig& c) {
  if (const toml::table* t = Section(root, "dedup", path)) {
    AllowOnly(*t, {"ngram", "bands", "rows", "threshold"}, "[dedup]", path);
    c.ngram = static_cast<int>(Get<int64_t>(*t, "ngram", c.ngram, "dedup", path));
    c.bands = static_cast<int>(Get<int64_t>(*t, "bands", c.bands, "dedup", path));
    c.rows = static_cast<int>(Get<int64_t>(*t, "rows", c.rows, "dedup", path));
    c.near_threshold = Get<double>(*t, "threshold", c.near_threshold, "dedup", path);
    TRAIL_CHECK(c.ngram >= 1 && c.bands >= 1 && c.rows >= 1 && c.near_threshold > 0 &&
                    c.near_threshold <= 1,
                path, ": [dedup] values out of range");
  }
  if (const toml::table* t = Section(root, "pii", path)) {
    AllowOnly(*t, {"enabled"}, "[pii]", path);
    c.pii = Get<bool>(*t, "enabled", true, "pii", path);
  }
  if (const toml::table* t = Section(root, "decontamination", path)) {
    AllowOnly(*t, {"eval_files", "ngram", "mode"}, "[decontamination]", path);
    c.eval_files = Strings(*t, "eval_files", "decontamination", path);
    c.decontam_ngram = static_cast<int>(Get<int64_t>(*t, "ngram", 13, "decontamination", path));
    const std::string mode = Get<std::string>(*t, "mode", "drop", "decontamination", path);
    TRAIL_CHECK(mode == "drop" || mode == "cut", path, ": [decontamination].mode is drop or cut");
    c.decontam_cut = mode == "cut";
  }
}

// [split] and [output].
void ReadSplitAndOutput(const toml::table& root, const std::string& path, CorpusConfig& c) {
  if (const toml::table* t = Section(root, "split", path)) {
    AllowOnly(*t, {"train", "validation"}, "[split]", path);
    c.train = Get<double>(*t, "train", c.train, "split", path);
    c.validation = Get<double>(*t, "validation", c.validation, "split", path);
    TRAIL_CHECK(c.train >= 0 && c.validation >= 0 && c.train + c.validation <= 1, path,
                ": [split] ratios must be >= 0 and sum to at most 1");
  }
  if (const toml::table* t = Section(root, "output", path)) {
    AllowOnly(*t, {"shard_documents"}, "[output]", path);
    c.shard_documents =
        static_cast<uint64_t>(Get<int64_t>(*t, "shard_documents", 10000, "output", path));
    TRAIL_CHECK(c.shard_documents >= 1, path, ": [output].shard_documents must be positive");
  }
}

}  // namespace

CorpusConfig LoadCorpusConfig(const std::string& path) {
  CorpusConfig c;
  c.text = ReadFileToString(path);
  const toml::table root = ParseTomlText(c.text, path);
  AllowOnly(root,
            {"seed", "max_record_bytes", "memory_budget_mb", "source", "language", "quality",
             "dedup", "pii", "decontamination", "split", "output"},
            "the top level", path);
  ReadLimits(root, path, c);
  ReadSources(root, path, c);
  ReadLanguageAndQuality(root, path, c);
  ReadDedupPiiAndDecontamination(root, path, c);
  ReadSplitAndOutput(root, path, c);
  return c;
}

}  // namespace trail::corpus
