#include "corpus/pipeline.h"

#include <sqlite3.h>
#include <zstd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <cstring>
#include <sstream>

#include "core/error.h"
#include "core/file_util.h"
#include "core/hash.h"
#include "core/thread_pool.h"
#include "corpus/decontam.h"
#include "corpus/extract.h"
#include "corpus/fortune.h"
#include "corpus/langid.h"
#include "corpus/lineage_db.h"
#include "corpus/near_dedup.h"
#include "corpus/normalize.h"
#include "corpus/pii.h"
#include "corpus/progress.h"
#include "corpus/quality.h"
#include "corpus/reader.h"
#include "corpus/shingles.h"
#include "data/documents.h"

namespace trail::corpus {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

constexpr const char* kStageVersions = "read1 trail-html-1 normalize1 language1 quality1 exact1 near1 pii1 decontam1 split1";

struct Doc {
  std::string key, source, file, raw;
  uint64_t offset = 0;
  size_t source_index = 0;
  // Stage results.
  std::string text, content_hash, drop, exact_survivor, cluster, shard, contaminated_by;
  std::string drop_stage;  // the stage whose verdict `drop` is
  NormalizeStats norm;
  LanguageGuess lang;
  std::vector<RuleResult> rules;
  std::string rules_json;  // RuleValuesJson(rules): the lineage's form
  std::vector<uint64_t> shingles;
  PiiCounts pii;
  Split split = Split::kTrain;
  uint64_t shard_line = 0;
};

Doc MakeDoc(std::string key, const SourceConfig& s, const std::string& file, std::string raw,
            uint64_t offset, size_t index) {
  Doc d;
  d.key = std::move(key);
  d.source = s.name;
  d.file = file;
  d.raw = std::move(raw);
  d.offset = offset;
  d.source_index = index;
  return d;
}

std::string Padded(uint64_t i) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "%08llu", static_cast<unsigned long long>(i));
  return buf;
}

// Keys name a file by its path below the deepest directory all of the source's files share,
// so files with the same name in different directories stay apart.
fs::path CommonDirectory(const std::vector<std::string>& paths) {
  fs::path common = fs::path(paths[0]).parent_path();
  for (const std::string& p : paths) {
    const fs::path dir = fs::path(p).parent_path();
    while (!common.empty() && std::mismatch(common.begin(), common.end(), dir.begin(), dir.end()).first != common.end()) {
      common = common.parent_path();
    }
  }
  return common;
}

// Reads a source's records; bad ones are quarantined, never fatal (a missing file is a
// configuration error and is).
void ReadSource(const CorpusConfig& cfg, size_t index, std::vector<Doc>& docs,
                std::vector<Quarantined>& bad, uint64_t& warc_skipped) {
  const SourceConfig& s = cfg.sources[index];
  const fs::path common = CommonDirectory(s.paths);
  for (const std::string& path : s.paths) {
    TRAIL_CHECK(fs::exists(path), s.name, ": input file ", path, " does not exist");
    const std::string base = fs::path(path).lexically_relative(common).string();
    auto keep = [&](RawRecord&& r) {
      docs.push_back(MakeDoc(s.name + "/" + r.id, s, path, std::move(r.text), r.offset, index));
    };
    auto quarantine = [&](Quarantined&& q) { bad.push_back(std::move(q)); };
    if (s.format == "jsonl") {
      ReadJsonlRecords(path, cfg.max_record_bytes, keep, quarantine);
      continue;
    }
    if (s.format == "warc") {
      ReadWarcRecords(path, cfg.max_record_bytes, keep, quarantine, &warc_skipped);
      continue;
    }
    const std::string all = ReadFileToString(path);
    if (s.format == "html") {
      docs.push_back(MakeDoc(s.name + "/" + base, s, path, ExtractHtml(all).text, 0, index));
      continue;
    }
    if (s.format == "text") {
      docs.push_back(MakeDoc(s.name + "/" + base, s, path, all, 0, index));
      continue;
    }
    for (const FortuneRecord& r : FortuneRecords(all)) {
      docs.push_back(MakeDoc(s.name + "/" + base + ":" + Padded(r.index), s, path,
                             std::string(r.text), r.offset, index));
    }
  }
}

std::string Compress(const std::string& s, int level = 3) {
  std::string out(ZSTD_compressBound(s.size()), '\0');
  const size_t n = ZSTD_compress(out.data(), out.size(), s.data(), s.size(), level);
  TRAIL_CHECK(!ZSTD_isError(n), "zstd: ", ZSTD_getErrorName(n));
  out.resize(n);
  return out;
}

// A document's quality rule results as the lineage stores them: [[value, pass], ...] in the
// rules' fixed order (names and thresholds, the same for every document, are stored once);
// numbers in to_chars' shortest exact form, null for a non-finite value.
std::string RuleValuesJson(const std::vector<RuleResult>& rules) {
  if (rules.empty()) return "";
  std::string j = "[";
  char buf[64];
  for (const RuleResult& r : rules) {
    j += j.size() == 1 ? "[" : ",[";
    if (std::isfinite(r.value)) j.append(buf, std::to_chars(buf, buf + sizeof buf, r.value).ptr);
    else j += "null";
    j += r.pass ? ",1]" : ",0]";
  }
  return j + "]";
}

// The per-document stages' results (normalize, language, quality) are checkpointed to
// <out>/.work/ once they are done, so a killed build resumes after them. The checkpoint is valid
// for the same config, stage versions and input bytes (its fingerprint) only.
constexpr const char* kWorkFile = "/.work/per-document.jsonl.zst";

std::string InputFingerprint(const CorpusConfig& cfg) {
  Sha256Hasher h;
  h.Update(cfg.text.data(), cfg.text.size());
  h.Update(kStageVersions, std::strlen(kStageVersions));
  for (const SourceConfig& src : cfg.sources) {
    for (const std::string& path : src.paths) {
      const MappedFile f(path);
      const Digest d = Sha256({f.data(), f.size()});
      h.Update(path.data(), path.size());
      h.Update(d.data(), d.size());
    }
  }
  return ToHex(h.Finish());
}

std::string Decompress(const std::string& z) {
  const unsigned long long n = ZSTD_getFrameContentSize(z.data(), z.size());
  TRAIL_CHECK(n != ZSTD_CONTENTSIZE_ERROR && n != ZSTD_CONTENTSIZE_UNKNOWN, "zstd: bad frame");
  std::string out(n, '\0');
  const size_t got = ZSTD_decompress(out.data(), out.size(), z.data(), z.size());
  TRAIL_CHECK(!ZSTD_isError(got) && got == n, "zstd: ", ZSTD_getErrorName(got));
  return out;
}

struct StageCount {
  uint64_t in = 0, out = 0;
  std::map<std::string, uint64_t> dropped;
  double seconds = 0;
};

}  // namespace

BuildSummary BuildCorpus(const CorpusConfig& cfg, const std::string& out_dir, int threads) {
  BuildOptions opt;
  opt.threads = threads;
  return BuildCorpus(cfg, out_dir, opt);
}

BuildSummary BuildCorpus(const CorpusConfig& cfg, const std::string& out_dir,
                         const BuildOptions& opt) {
  const int threads = opt.threads;
  fs::create_directories(out_dir);
  ThreadPool pool(static_cast<size_t>(std::max(1, threads)));
  std::map<std::string, StageCount> stages;
  std::vector<std::string> order;
  auto alive = [](const Doc& d) { return d.drop.empty(); };
  std::vector<Doc> docs;
  uint64_t live = 0;
  auto t0 = std::chrono::steady_clock::now();
  // Closes a stage: the documents dropped since the last stage are its drops; its time is the
  // time since the last stage closed.
  auto close_stage = [&](const std::string& name) {
    StageCount& c = stages[name];
    const auto now = std::chrono::steady_clock::now();
    c.seconds = std::chrono::duration<double>(now - t0).count();
    t0 = now;
    c.in = live;
    for (Doc& d : docs) {
      if (!d.drop.empty() && d.drop_stage.empty()) {
        d.drop_stage = name;
        ++c.dropped[d.drop];
        --live;
      }
    }
    c.out = live;
    order.push_back(name);
  };

  // Read. An earlier build's outputs go first, so a build that fails midway leaves no
  // report.json and no stale shards that could pass for this build's.
  fs::remove(out_dir + "/report.json");
  for (const char* split : {"train", "validation", "test"}) fs::remove_all(out_dir + "/" + split);
  fs::remove(out_dir + "/quarantine.jsonl");
  std::vector<Quarantined> bad;
  uint64_t warc_skipped = 0;
  for (size_t i = 0; i < cfg.sources.size(); ++i) ReadSource(cfg, i, docs, bad, warc_skipped);
  // Key order; of records repeating a key, the first read stays and the others are quarantined.
  std::stable_sort(docs.begin(), docs.end(),
                   [](const Doc& a, const Doc& b) { return a.key < b.key; });
  {
    std::vector<Doc> unique;
    unique.reserve(docs.size());
    for (Doc& d : docs) {
      if (!unique.empty() && unique.back().key == d.key) {
        bad.push_back({d.file, d.offset, 0, d.raw.size(), "duplicate_id",
                       "key " + d.key + " was already read from " + unique.back().file,
                       SampleBytes(d.raw), ToHex(Sha256({reinterpret_cast<const uint8_t*>(d.raw.data()),
                                                         d.raw.size()}))});
        continue;
      }
      unique.push_back(std::move(d));
    }
    docs = std::move(unique);
  }
  live = docs.size();
  close_stage("read");
  {
    StageCount& read = stages["read"];
    read.in += bad.size();
    for (const Quarantined& q : bad) ++read.dropped["quarantine." + q.reason];
  }

  // Per-document stages, one parallel pass each (so each is timed on its own); a stage skips
  // documents an earlier one dropped. A document counts in the stage that dropped it.
  uint64_t raw_bytes = 0;
  for (const Doc& d : docs) raw_bytes += d.raw.size();
  auto pass = [&](const std::string& stage, auto&& fn) {
    StageProgress progress(stage, docs.size(), raw_bytes, opt.progress);
    pool.ParallelFor(docs.size(), [&](size_t i) {
      if (alive(docs[i])) fn(docs[i]);
      progress.Tick();
    });
    progress.Finish();
    close_stage(stage);
  };
  // Resume: restore the per-document stages from an earlier build's checkpoint when it was
  // made from exactly these inputs and config.
  const std::string fingerprint = InputFingerprint(cfg);
  std::string resumed;
  double checkpoint_seconds = 0;
  {
    const std::string work = out_dir + kWorkFile;
    std::vector<nlohmann::json> rows;
    if (fs::exists(work)) {
      try {
        std::istringstream in(Decompress(ReadFileToString(work)));
        std::string line;
        std::getline(in, line);
        const nlohmann::json head = nlohmann::json::parse(line);
        if (head.value("fingerprint", "") == fingerprint &&
            head.value("documents", uint64_t{0}) == docs.size()) {
          for (size_t i = 0; std::getline(in, line); ++i) {
            rows.push_back(nlohmann::json::parse(line));
            if (i >= docs.size() || rows.back().value("k", "") != docs[i].key) break;
          }
        }
      } catch (const std::exception&) {
        rows.clear();  // an unreadable checkpoint is recomputed, never trusted
      }
    }
    if (!rows.empty() && rows.size() == docs.size() &&
        rows.back().value("k", "") == docs.back().key) {
      for (size_t i = 0; i < docs.size(); ++i) {
        Doc& d = docs[i];
        const nlohmann::json& r = rows[i];
        d.text = r.at("t").get<std::string>();
        d.content_hash = r.at("h").get<std::string>();
        d.norm.encoding = r.at("enc").get<std::string>();
        d.norm.detected = r.at("det").get<bool>();
        d.norm.replaced = r.at("rep").get<uint64_t>();
        d.norm.controls_removed = r.at("ctl").get<uint64_t>();
        d.lang.language = r.at("lang").get<std::string>();
        d.lang.score = r.at("ls").get<double>();
        d.rules_json = r.at("r").get<std::string>();
      }
      // Drops are re-applied stage by stage, so each stage reports what it dropped.
      for (const char* stage : {"normalize", "language", "quality"}) {
        for (size_t i = 0; i < docs.size(); ++i) {
          if (rows[i].value("ds", "") == stage) docs[i].drop = rows[i].at("d").get<std::string>();
        }
        close_stage(stage);
      }
      resumed = "per-document stages (normalize, language, quality) restored from " +
                std::string(kWorkFile + 1);
    }
  }
  if (resumed.empty()) {
    pass("normalize", [&](Doc& d) {
      const SourceConfig& s = cfg.sources[d.source_index];
      NormalizeConfig nc;
      nc.declared_encoding = s.encoding;
      nc.esperanto_x_system = s.esperanto_x_system;
      d.text = NormalizeText(d.raw, nc, &d.norm);
      d.content_hash = ContentHash(d.text);
      if (d.text.find_first_not_of(" \t\n") == std::string::npos) d.drop = "normalize.empty";
    });
    std::unique_ptr<LanguageIdentifier> lid;
    if (cfg.language) lid = std::make_unique<LanguageIdentifier>(cfg.language_model);
    pass("language", [&](Doc& d) {
      if (!lid) return;
      d.lang = lid->Identify(d.text);
      if (!cfg.sources[d.source_index].language_filter) return;  // recorded, not a filter
      const auto& ok = cfg.allowed_languages;
      if (!ok.empty() && std::find(ok.begin(), ok.end(), d.lang.language) == ok.end()) {
        d.drop = "language.not_allowed";
      } else if (d.lang.score < cfg.min_language_score) {
        d.drop = "language.low_score";
      }
    });
    pass("quality", [&](Doc& d) {
      if (!cfg.quality) return;
      d.rules = QualityRules(d.text, cfg.quality_cfg);
      d.rules_json = RuleValuesJson(d.rules);
      if (!cfg.sources[d.source_index].quality_filter) return;  // recorded, not a filter
      const std::string fail = FirstFailure(d.rules);
      if (!fail.empty()) d.drop = "quality." + fail;
    });
    // Checkpoint what the per-document stages computed (text that JSON cannot carry exactly
    // means no checkpoint: the build goes on, a resume recomputes).
    const auto c0 = std::chrono::steady_clock::now();
    try {
    std::string body = nlohmann::json{{"format", "trail.corpus-work.v1"},
                                      {"fingerprint", fingerprint},
                                      {"documents", docs.size()}}.dump() + "\n";
    // Lines are made in parallel, in fixed chunks, and joined in order.
    constexpr size_t kChunk = 1024;
    std::vector<std::string> parts((docs.size() + kChunk - 1) / kChunk);
    pool.ParallelFor(parts.size(), [&](size_t c) {
      for (size_t k = c * kChunk; k < std::min(docs.size(), (c + 1) * kChunk); ++k) {
        const Doc& d = docs[k];
        // A dropped document's text is never used again: only the survivors' is kept.
        parts[c] += nlohmann::json{{"k", d.key}, {"t", d.drop.empty() ? d.text : std::string()},
                                   {"h", d.content_hash}, {"d", d.drop}, {"ds", d.drop_stage},
                                   {"enc", d.norm.encoding}, {"det", d.norm.detected},
                                   {"rep", d.norm.replaced}, {"ctl", d.norm.controls_removed},
                                   {"lang", d.lang.language}, {"ls", d.lang.score},
                                   {"r", d.rules_json}}
                        .dump() + "\n";
      }
    });
    for (const std::string& part : parts) body += part;
    fs::create_directories(out_dir + "/.work");
    WriteFileAtomic(out_dir + kWorkFile, Compress(body, 1));  // scratch: speed over size
    } catch (const nlohmann::json::exception&) {
    }
    t0 = std::chrono::steady_clock::now();  // the checkpoint is not the next stage's time
    checkpoint_seconds = std::chrono::duration<double>(t0 - c0).count();
  }

  // Exact dedup: the smallest key per content hash survives.
  {
    std::map<std::string, std::string> first;
    for (Doc& d : docs) {
      if (!alive(d)) continue;
      auto [it, fresh] = first.emplace(d.content_hash, d.key);
      d.exact_survivor = it->second;
      if (!fresh) d.drop = "exact_dup";
    }
    close_stage("exact_dedup");
  }

  // Near dedup over the survivors, in key order.
  {
    pool.ParallelFor(docs.size(), [&](size_t i) {
      if (alive(docs[i])) docs[i].shingles = Shingles(docs[i].text, cfg.ngram);
    });
    std::vector<size_t> idx;
    std::vector<std::string> keys;
    std::vector<std::vector<uint64_t>> sets;
    for (size_t i = 0; i < docs.size(); ++i) {
      if (!alive(docs[i])) continue;
      idx.push_back(i);
      keys.push_back(docs[i].key);
      sets.push_back(docs[i].shingles);
    }
    NearDedupConfig nc;
    nc.bands = cfg.bands;
    nc.rows = cfg.rows;
    nc.threshold = cfg.near_threshold;
    nc.seed = cfg.seed;
    nc.threads = threads;
    const NearDedupResult r = NearDedup(keys, sets, nc);
    std::map<std::string, std::string> cluster_of;  // exact survivor -> near cluster
    for (size_t j = 0; j < idx.size(); ++j) {
      Doc& d = docs[idx[j]];
      d.cluster = keys[r.survivor[j]];
      cluster_of[d.key] = d.cluster;
      if (r.survivor[j] != j) d.drop = "near_dup";
    }
    for (Doc& d : docs) {  // exact duplicates belong to their survivor's cluster
      if (d.drop == "exact_dup") d.cluster = cluster_of.count(d.exact_survivor) ? cluster_of[d.exact_survivor] : d.exact_survivor;
    }
    close_stage("near_dedup");
  }

  // PII and decontamination on the survivors.
  std::unique_ptr<ContaminationIndex> contam;
  if (!cfg.eval_files.empty()) {
    std::vector<EvalItem> items;
    for (const std::string& f : cfg.eval_files) {
      std::istringstream in(ReadFileToString(f));
      std::string line;
      for (int n = 0; std::getline(in, line); ++n) {
        items.push_back({fs::path(f).filename().string(), std::to_string(n), line});
      }
    }
    contam = std::make_unique<ContaminationIndex>(items, cfg.decontam_ngram);
  }
  DecontamConfig dc;
  dc.cut = cfg.decontam_cut;
  pool.ParallelFor(docs.size(), [&](size_t i) {
    Doc& d = docs[i];
    if (!alive(d)) return;
    if (cfg.pii) {
      PiiResult p = RedactPii(d.text);
      d.pii = p.counts;
      d.text = std::move(p.text);
    }
    if (contam) {
      DecontamOutcome o = Decontaminate(d.text, *contam, dc);
      if (!o.hits.empty()) d.contaminated_by = std::to_string(o.hits.size()) + " n-gram hits";
      if (o.dropped) {
        d.drop = "contaminated";
      } else {
        d.text = std::move(o.text);
      }
    }
  });
  close_stage("pii_decontamination");  // one pass over the text: PII never drops

  // Split by cluster, then per-source quotas (smallest keys first).
  std::vector<uint64_t> kept_per_source(cfg.sources.size(), 0);
  for (Doc& d : docs) {
    if (!d.cluster.empty()) d.split = SplitOfCluster(d.cluster, cfg.seed, cfg.train, cfg.validation);
    if (!alive(d)) continue;
    const uint64_t quota = cfg.sources[d.source_index].quota;
    if (quota > 0 && kept_per_source[d.source_index] >= quota) {
      d.drop = "quota";
      continue;
    }
    ++kept_per_source[d.source_index];
  }
  {
    close_stage("split_quota");
  }

  // Shards: per (split, source), key order, shard_documents per file.
  BuildSummary sum;
  std::map<std::pair<int, size_t>, std::vector<Doc*>> groups;
  for (Doc& d : docs) {
    sum.bytes_in += d.raw.size();
    if (alive(d)) groups[{static_cast<int>(d.split), d.source_index}].push_back(&d);
  }
  for (auto& [g, list] : groups) {
    const std::string split = SplitName(static_cast<Split>(g.first));
    fs::create_directories(out_dir + "/" + split);
    for (size_t s = 0; s * cfg.shard_documents < list.size(); ++s) {
      const std::string rel = split + "/" + cfg.sources[g.second].name + "-" +
                              Padded(s).substr(3) + ".jsonl.zst";
      std::string body;
      const size_t end = std::min(list.size(), (s + 1) * cfg.shard_documents);
      for (size_t i = s * cfg.shard_documents; i < end; ++i) {
        Doc& d = *list[i];
        d.shard = rel;
        d.shard_line = i - s * cfg.shard_documents + 1;
        Json j{{"id", d.key}, {"text", d.text}, {"source", d.source},
               {"metadata", Json{{"language", d.lang.language}, {"cluster", d.cluster}}}};
        body += j.dump() + "\n";
        sum.bytes_out += d.text.size();
        ++sum.kept;
      }
      WriteFileAtomic(out_dir + "/" + rel, Compress(body));
      ++sum.shards;
    }
  }
  close_stage("shards");
  sum.documents = docs.size();

  // Lineage.
  const std::string db_path = out_dir + "/lineage.sqlite";
  const std::string tmp = db_path + ".tmp";
  fs::remove(tmp);
  {
    Db db(tmp);
    db.Exec("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;");
    db.Exec("CREATE TABLE run(name TEXT PRIMARY KEY, value TEXT);"
            "CREATE TABLE documents(key TEXT PRIMARY KEY, source TEXT, file TEXT, offset INTEGER,"
            " bytes INTEGER, encoding TEXT, encoding_detected INTEGER, replaced INTEGER,"
            " controls_removed INTEGER, content_hash TEXT, language TEXT, language_score REAL,"
            " exact_survivor TEXT, cluster TEXT, pii_email INTEGER, pii_phone INTEGER,"
            " pii_ip INTEGER, pii_secret INTEGER, contamination TEXT, split TEXT, kept INTEGER,"
            " drop_reason TEXT, shard TEXT, shard_line INTEGER, rules TEXT);"
            // Quality rules: names and thresholds once (quality_rules), each document's
            // [[value, pass], ...] in that order (documents.rules), read as rows (key, rule,
            // value, threshold, pass) through the view `rules` — one insert per document
            // instead of one per rule.
            "CREATE TABLE quality_rules(idx INTEGER PRIMARY KEY, rule TEXT, threshold REAL);"
            "CREATE VIEW rules AS SELECT d.key AS key, q.rule AS rule,"
            " json_extract(r.value, '$[0]') AS value, q.threshold AS threshold,"
            " json_extract(r.value, '$[1]') AS pass FROM documents d, json_each(d.rules) r"
            " JOIN quality_rules q ON q.idx = r.key;"
            "CREATE TABLE quarantine(file TEXT, offset INTEGER, line INTEGER, bytes INTEGER,"
            " reason TEXT, detail TEXT, sample TEXT, sha256 TEXT);"
            "BEGIN;");
    const Digest cfg_hash = Sha256({reinterpret_cast<const uint8_t*>(cfg.text.data()), cfg.text.size()});
    Stmt run(db.get(), "INSERT INTO run VALUES (?, ?)");
    run.Text(1, "config_sha256").Text(2, ToHex(cfg_hash)).Run();
    run.Text(1, "stage_versions").Text(2, kStageVersions).Run();
    run.Text(1, "seed").Text(2, std::to_string(cfg.seed)).Run();
    Stmt ins(db.get(),
             "INSERT INTO documents VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    // The rule list (names, thresholds) is the config's: the same for every document that ran
    // the quality stage.
    {
      Stmt q(db.get(), "INSERT INTO quality_rules VALUES (?,?,?)");
      int64_t idx = 0;
      for (const RuleResult& r : QualityRules("", cfg.quality_cfg)) {
        q.Int(1, idx++).Text(2, r.rule).Real(3, r.threshold).Run();
      }
    }
    for (size_t i = 0; i < docs.size(); ++i) {
      const Doc& d = docs[i];
      ins.Text(1, d.key).Text(2, d.source).Text(3, d.file).Int(4, static_cast<int64_t>(d.offset))
          .Int(5, static_cast<int64_t>(d.raw.size())).Text(6, d.norm.encoding)
          .Int(7, d.norm.detected).Int(8, static_cast<int64_t>(d.norm.replaced))
          .Int(9, static_cast<int64_t>(d.norm.controls_removed)).Text(10, d.content_hash)
          .Text(11, d.lang.language).Real(12, d.lang.score).Text(13, d.exact_survivor)
          .Text(14, d.cluster).Int(15, static_cast<int64_t>(d.pii.email))
          .Int(16, static_cast<int64_t>(d.pii.phone)).Int(17, static_cast<int64_t>(d.pii.ip))
          .Int(18, static_cast<int64_t>(d.pii.secret)).Text(19, d.contaminated_by)
          .Text(20, d.cluster.empty() ? "" : SplitName(d.split)).Int(21, alive(d))
          .Text(22, d.drop).Text(23, d.shard).Int(24, static_cast<int64_t>(d.shard_line));
      if (d.rules_json.empty()) {
        sqlite3_bind_null(ins.get(), 25);
      } else {
        ins.Text(25, d.rules_json);
      }
      ins.Run();
    }
    Stmt qi(db.get(), "INSERT INTO quarantine VALUES (?,?,?,?,?,?,?,?)");
    for (const Quarantined& q : bad) {
      qi.Text(1, q.file).Int(2, static_cast<int64_t>(q.offset)).Int(3, static_cast<int64_t>(q.line))
          .Int(4, static_cast<int64_t>(q.bytes)).Text(5, q.reason).Text(6, q.detail)
          .Text(7, q.sample).Text(8, q.sha256).Run();
    }
    db.Exec("COMMIT;");
  }
  fs::rename(tmp, db_path);
  if (!bad.empty()) {
    std::string lines;
    for (const Quarantined& q : bad) {
      lines += Json{{"file", q.file}, {"offset", q.offset}, {"line", q.line}, {"bytes", q.bytes},
                    {"reason", q.reason}, {"detail", q.detail}, {"sample", q.sample},
                    {"sha256", q.sha256}}
                   .dump(-1, ' ', false, Json::error_handler_t::replace) +
               "\n";
    }
    WriteFileAtomic(out_dir + "/quarantine.jsonl", lines);
  }
  const double lineage_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  Json rep;
  rep["format"] = "trail.corpus-report.v1";
  rep["documents"] = sum.documents;
  rep["kept"] = sum.kept;
  rep["bytes_in"] = sum.bytes_in;
  rep["bytes_out"] = sum.bytes_out;
  rep["shards"] = sum.shards;
  Json qr = Json::object();
  for (const Quarantined& q : bad) qr[q.reason] = qr.value(q.reason, 0) + 1;
  rep["quarantined"] = bad.size();
  rep["quarantine_reasons"] = qr;
  rep["warc_records_skipped"] = warc_skipped;
  if (!resumed.empty()) rep["resumed"] = resumed;
  rep["checkpoint_seconds"] = checkpoint_seconds;
  sum.quarantined = bad.size();
  Json st = Json::array();
  for (const std::string& name : order) {
    const StageCount& c = stages[name];
    Json dropped = Json::object();
    for (const auto& [r, n] : c.dropped) dropped[r] = n;
    st.push_back(Json{{"stage", name}, {"in", c.in}, {"out", c.out}, {"dropped", dropped},
                      {"seconds", c.seconds}});
  }
  rep["stages"] = st;
  rep["lineage_seconds"] = lineage_seconds;
  sum.report_json = rep.dump(2) + "\n";
  WriteFileAtomic(out_dir + "/report.json", sum.report_json);
  fs::remove_all(out_dir + "/.work");  // the build is complete: nothing left to resume
  return sum;
}

std::string ExplainDocument(const std::string& lineage_db, const std::string& key) {
  TRAIL_CHECK(fs::exists(lineage_db), lineage_db, ": lineage database not found");
  Db db(lineage_db);
  Stmt q(db.get(),
         "SELECT source, file, offset, bytes, encoding, language, language_score, exact_survivor,"
         " cluster, pii_email + pii_phone + pii_ip + pii_secret, contamination, split, kept,"
         " drop_reason, shard, shard_line FROM documents WHERE key = ?");
  q.Text(1, key);
  if (sqlite3_step(q.get()) != SQLITE_ROW) return "";
  auto col = [&](int i) {
    const unsigned char* t = sqlite3_column_text(q.get(), i);
    return t ? std::string(reinterpret_cast<const char*>(t)) : std::string();
  };
  std::ostringstream out;
  out << key << "\n  from " << col(1) << " (source " << col(0) << ", offset " << col(2) << ", "
      << col(3) << " bytes, " << col(4) << ")\n";
  if (!col(5).empty()) out << "  language " << col(5) << " (score " << col(6) << ")\n";
  const bool kept = sqlite3_column_int(q.get(), 12) != 0;
  if (kept) {
    out << "  KEPT: split " << col(11) << ", cluster " << col(8) << ", written to " << col(14)
        << " line " << col(15) << "; " << col(9) << " PII replacements\n";
  } else {
    out << "  DROPPED: " << col(13);
    if (col(13) == "exact_dup") out << " of " << col(7);
    if (col(13) == "near_dup") out << " (cluster survivor " << col(8) << ")";
    if (!col(10).empty()) out << " (" << col(10) << ")";
    out << "\n";
  }
  // After `trail corpus tokenize`: where its tokens are.
  sqlite3_stmt* has = nullptr;
  sqlite3_prepare_v2(db.get(), "SELECT 1 FROM sqlite_master WHERE name = 'tokens'", -1, &has,
                     nullptr);
  const bool tokenized = sqlite3_step(has) == SQLITE_ROW;
  sqlite3_finalize(has);
  if (tokenized) {
    Stmt t(db.get(), "SELECT token_shard, shard_doc, token_start, tokens FROM tokens WHERE key = ?");
    t.Text(1, key);
    if (sqlite3_step(t.get()) == SQLITE_ROW) {
      out << "  tokens: " << reinterpret_cast<const char*>(sqlite3_column_text(t.get(), 0))
          << " document " << sqlite3_column_int64(t.get(), 1) << ", tokens ["
          << sqlite3_column_int64(t.get(), 2) << ", "
          << sqlite3_column_int64(t.get(), 2) + sqlite3_column_int64(t.get(), 3) << ")\n";
    }
  }
  Stmt r(db.get(), "SELECT rule, value, threshold, pass FROM rules WHERE key = ? AND pass = 0");
  r.Text(1, key);
  while (sqlite3_step(r.get()) == SQLITE_ROW) {
    out << "  failed " << reinterpret_cast<const char*>(sqlite3_column_text(r.get(), 0))
        << ": value " << sqlite3_column_double(r.get(), 1) << " vs threshold "
        << sqlite3_column_double(r.get(), 2) << "\n";
  }
  return out.str();
}

}  // namespace trail::corpus
