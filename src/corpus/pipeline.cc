#include "corpus/pipeline.h"

#include <sqlite3.h>
#include <malloc.h>
#include <zstd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "core/error.h"
#include "core/file_util.h"
#include "core/hash.h"
#include "core/thread_pool.h"
#include "corpus/decontam.h"
#include "corpus/doc_record.h"
#include "corpus/doc_runs.h"
#include "corpus/extract.h"
#include "corpus/fortune.h"
#include "corpus/langid.h"
#include "corpus/lineage.h"
#include "corpus/lineage_db.h"
#include "corpus/memory_watch.h"
#include "corpus/near_dedup.h"
#include "corpus/near_dedup_runs.h"
#include "corpus/normalize.h"
#include "corpus/pii.h"
#include "corpus/progress.h"
#include "corpus/quality.h"
#include "corpus/reader.h"
#include "corpus/spill.h"

namespace trail::corpus {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;

constexpr const char* kStageVersions = "read1 trail-html-1 normalize1 language1 quality1 exact1 near1 pii1 decontam1 split1";
// The per-document stages in the order they run; a document counts in the stage that dropped it.
constexpr const char* kStages[] = {"read", "normalize", "language", "quality", "exact_dedup",
                                   "near_dedup", "pii_decontamination", "split_quota", "shards"};

double Since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::string Padded(uint64_t i) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "%08llu", static_cast<unsigned long long>(i));
  return buf;
}

// How the memory budget is shared. Only one of these is large at any time: documents in
// flight through the per-document stages, a sort buffer, a batch of texts for PII and
// decontamination or for verifying candidate pairs.
struct Budget {
  uint64_t total;
  // Raw bytes read per chunk: the chunk holds them, the normalized text, rule values and the
  // encoding being written (about 4x), plus what the stages allocate per worker.
  uint64_t chunk() const { return std::max<uint64_t>(256 << 10, total / 10); }
  // A sorter is drained into the next one (hashes into duplicates, bands into pairs): two
  // sort buffers can be full at once.
  uint64_t sort() const { return total / 10; }
  size_t write_buffer() const { return static_cast<size_t>(std::clamp<uint64_t>(total / 64, 64 << 10, 1 << 20)); }
  // Texts for PII and decontamination: each is copied up to twice while redacted and cut.
  uint64_t batch() const { return std::max<uint64_t>(256 << 10, total / 16); }
  // Shingle sets take ~8 bytes per word, about 1.5x the text.
  uint64_t verify_batch() const { return std::max<uint64_t>(256 << 10, total / 16); }
  // Merging document runs holds a read buffer and one record per run: at most this many runs
  // are merged at once (more are first merged in groups).
  size_t merge_fan_in() const { return static_cast<size_t>(std::max<uint64_t>(4, total / 16 / (64 << 10))); }
  size_t run_buffer(size_t runs) const {
    return static_cast<size_t>(std::clamp<uint64_t>(total / 32 / std::max<size_t>(1, runs), 16 << 10, 1 << 20));
  }
  int64_t sqlite_cache_kib() const { return static_cast<int64_t>(total / 32 / 1024); }
};

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

struct RawDoc {
  std::string key;
  uint32_t file_index;
  uint64_t offset;
  std::string raw;
};

// Reads a source's records in order, one at a time; bad ones are quarantined, never fatal (a
// missing file is a configuration error and is). on_file_done(bytes) after each file.
template <class OnDoc, class OnFileDone>
void ReadSource(const CorpusConfig& cfg, size_t index, uint32_t first_file, OnDoc&& on_doc,
                const QuarantineFn& on_bad, uint64_t& warc_skipped, OnFileDone&& on_file_done) {
  const SourceConfig& s = cfg.sources[index];
  const fs::path common = CommonDirectory(s.paths);
  for (size_t f = 0; f < s.paths.size(); ++f) {
    const std::string& path = s.paths[f];
    const uint32_t file_index = first_file + static_cast<uint32_t>(f);
    TRAIL_CHECK(fs::exists(path), s.name, ": input file ", path, " does not exist");
    const std::string base = fs::path(path).lexically_relative(common).string();
    auto keep = [&](RawRecord&& r) {
      on_doc(RawDoc{s.name + "/" + r.id, file_index, r.offset, std::move(r.text)});
    };
    if (s.format == "jsonl") {
      ReadJsonlRecords(path, cfg.max_record_bytes, keep, on_bad);
    } else if (s.format == "warc") {
      ReadWarcRecords(path, cfg.max_record_bytes, keep, on_bad, &warc_skipped);
    } else {
      std::string all = ReadFileToString(path);
      if (s.format == "html") {
        on_doc(RawDoc{s.name + "/" + base, file_index, 0, ExtractHtml(all).text});
      } else if (s.format == "text") {
        on_doc(RawDoc{s.name + "/" + base, file_index, 0, std::move(all)});
      } else {
        for (const FortuneRecord& r : FortuneRecords(all)) {
          on_doc(RawDoc{s.name + "/" + base + ":" + Padded(r.index), file_index, r.offset,
                        std::string(r.text)});
        }
      }
    }
    on_file_done(fs::file_size(path));
  }
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

// The work directory (<out>/.work) belongs to one build: the same config, stage versions,
// memory budget (it decides where chunks end) and input bytes. Any other build clears it.
std::string InputFingerprint(const CorpusConfig& cfg, uint64_t budget) {
  Sha256Hasher h;
  h.Update(cfg.text.data(), cfg.text.size());
  h.Update(kStageVersions, std::strlen(kStageVersions));
  h.UpdateU64(budget);
  for (const SourceConfig& src : cfg.sources) {
    for (const std::string& path : src.paths) {
      TRAIL_CHECK(fs::exists(path), src.name, ": input file ", path, " does not exist");
      const Digest d = Sha256OfFile(path);
      h.Update(path.data(), path.size());
      h.Update(d.data(), d.size());
    }
  }
  return ToHex(h.Finish());
}

std::string ReadOr(const std::string& path, const std::string& otherwise) {
  try {
    return fs::exists(path) ? ReadFileToString(path) : otherwise;
  } catch (const std::exception&) {
    return otherwise;
  }
}

// A document run left by an earlier build is used only when its meta file names this build's
// fingerprint, chunk and document count, and the run's bytes still hash to what it recorded.
bool RunIsValid(const std::string& run, const std::string& fingerprint, size_t chunk,
                size_t documents) {
  try {
    if (!fs::exists(run) || !fs::exists(run + ".meta")) return false;
    const nlohmann::json m = nlohmann::json::parse(ReadFileToString(run + ".meta"));
    return m.at("fingerprint") == fingerprint && m.at("chunk") == chunk &&
           m.at("documents") == documents && m.at("sha256") == ToHex(Sha256OfFile(run));
  } catch (const std::exception&) {
    return false;
  }
}

struct HashOrdinal {  // exact dedup: (content hash, document)
  uint64_t h0, h1;
  uint32_t ord, pad;
  bool operator<(const HashOrdinal& o) const {
    return h0 != o.h0 ? h0 < o.h0 : h1 != o.h1 ? h1 < o.h1 : ord < o.ord;
  }
};

uint64_t HexU64(std::string_view hex) {
  uint64_t v = 0;
  const auto r = std::from_chars(hex.data(), hex.data() + hex.size(), v, 16);
  TRAIL_CHECK(r.ec == std::errc() && r.ptr == hex.data() + hex.size(), "bad content hash ", hex);
  return v;
}

// Compresses `bytes` bytes read from `in` into one zstd frame at `path` (atomically). The size
// is pledged, so the frame header carries it.
void CompressInto(SpillReader& in, uint64_t bytes, const std::string& path, ZSTD_CCtx* cctx) {
  ZSTD_CCtx_reset(cctx, ZSTD_reset_session_only);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 3);
  // A fixed 1 MiB window (level 3 would take 2 MiB for large shards): the compressor's memory
  // stays small and the bytes never depend on the memory budget.
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_windowLog, 20);
  ZSTD_CCtx_setPledgedSrcSize(cctx, bytes);
  AtomicFile out(path);
  std::vector<char> src(1 << 17), dst(ZSTD_CStreamOutSize());
  uint64_t left = bytes;
  for (;;) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(src.size(), left));
    if (n > 0) TRAIL_CHECK(in.Read(src.data(), n), path, ": group file ended early");
    left -= n;
    const ZSTD_EndDirective mode = left == 0 ? ZSTD_e_end : ZSTD_e_continue;
    ZSTD_inBuffer ib{src.data(), n, 0};
    size_t pending;
    do {
      ZSTD_outBuffer ob{dst.data(), dst.size(), 0};
      pending = ZSTD_compressStream2(cctx, &ob, &ib, mode);
      TRAIL_CHECK(!ZSTD_isError(pending), "zstd: ", ZSTD_getErrorName(pending));
      out.Write(dst.data(), ob.pos);
    } while (mode == ZSTD_e_end ? pending != 0 : ib.pos < ib.size);
    if (mode == ZSTD_e_end) break;
  }
  out.Commit();
}

}  // namespace

BuildSummary BuildCorpus(const CorpusConfig& cfg, const std::string& out_dir, int threads) {
  BuildOptions opt;
  opt.threads = threads;
  return BuildCorpus(cfg, out_dir, opt);
}

BuildSummary BuildCorpus(const CorpusConfig& cfg, const std::string& out_dir,
                         const BuildOptions& opt) {
  const Budget budget{opt.memory_budget_bytes ? opt.memory_budget_bytes : cfg.memory_budget_bytes};
  fs::create_directories(out_dir);
  // Large blocks (texts, buffers) straight from and back to the kernel: glibc would otherwise
  // raise its mmap threshold after the first large free and keep such blocks in its heaps.
  mallopt(M_MMAP_THRESHOLD, 256 << 10);
  const MemoryWatch memory;
  ThreadPool pool(static_cast<size_t>(std::max(1, opt.threads)));
  std::map<std::string, double> seconds;
  std::map<std::string, std::map<std::string, uint64_t>> dropped;  // stage -> reason -> count

  // An earlier build's outputs go first, so a build that fails midway leaves no report.json
  // and no stale shards that could pass for this build's.
  fs::remove(out_dir + "/report.json");
  for (const char* split : {"train", "validation", "test"}) fs::remove_all(out_dir + "/" + split);
  fs::remove(out_dir + "/quarantine.jsonl");
  const std::string work = out_dir + "/.work";
  const std::string fingerprint = InputFingerprint(cfg, budget.total);
  if (ReadOr(work + "/fingerprint", "") != fingerprint) fs::remove_all(work);
  fs::create_directories(work);
  WriteFileAtomic(work + "/fingerprint", fingerprint);
  std::vector<fs::path> scratch;  // of an interrupted build: all but the finished runs
  for (const auto& e : fs::directory_iterator(work)) {
    const std::string name = e.path().filename().string();
    const bool run = name.rfind("docs-", 0) == 0 && name.find(".tmp") == std::string::npos;
    if (name != "fingerprint" && !run) scratch.push_back(e.path());
  }
  for (const fs::path& p : scratch) fs::remove_all(p);

  // ---- Read and the per-document stages (normalize, language, quality), chunk by chunk. ----
  // Each chunk's results are sorted by key and written as a document run: the build's
  // checkpoint. A rerun of the same build reuses every valid run and redoes only the rest.
  std::vector<std::string> files;
  for (const SourceConfig& s : cfg.sources) files.insert(files.end(), s.paths.begin(), s.paths.end());
  uint64_t input_bytes = 0;
  for (const std::string& f : files) input_bytes += fs::file_size(f);
  std::unique_ptr<LanguageIdentifier> lid;
  if (cfg.language) lid = std::make_unique<LanguageIdentifier>(cfg.language_model);

  struct Pending {
    DocRecord rec;
    std::string raw;
  };
  std::vector<Pending> chunk;
  uint64_t chunk_bytes = 0;
  std::vector<std::string> runs;
  size_t resumed_runs = 0;
  double stage_seconds = 0, checkpoint_seconds = 0;
  std::vector<Quarantined> bad;
  uint64_t warc_skipped = 0;
  const auto read_start = Clock::now();

  auto pass = [&](const char* stage, auto&& fn) {
    const auto t = Clock::now();
    pool.ParallelFor(chunk.size(), [&](size_t i) {
      DocRecord& d = chunk[i].rec;
      if (!d.drop.empty()) return;
      fn(chunk[i]);
      if (!d.drop.empty()) d.drop_stage = stage;
    });
    const double s = Since(t);
    seconds[stage] += s;
    stage_seconds += s;
  };
  auto process_chunk = [&] {
    pass("normalize", [&](Pending& p) {
      DocRecord& d = p.rec;
      const SourceConfig& s = cfg.sources[d.source_index];
      d.raw_bytes = p.raw.size();
      d.raw_sha256 = ToHex(Sha256({reinterpret_cast<const uint8_t*>(p.raw.data()), p.raw.size()}));
      d.raw_sample = SampleBytes(p.raw);
      NormalizeConfig nc;
      nc.declared_encoding = s.encoding;
      nc.esperanto_x_system = s.esperanto_x_system;
      d.text = NormalizeText(p.raw, nc, &d.norm);
      std::string().swap(p.raw);
      d.content_hash = ContentHash(d.text);
      if (d.text.find_first_not_of(" \t\n") == std::string::npos) d.drop = "normalize.empty";
    });
    pass("language", [&](Pending& p) {
      DocRecord& d = p.rec;
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
    pass("quality", [&](Pending& p) {
      DocRecord& d = p.rec;
      if (!cfg.quality) return;
      const std::vector<RuleResult> rules = QualityRules(d.text, cfg.quality_cfg);
      d.rules_json = RuleValuesJson(rules);
      if (!cfg.sources[d.source_index].quality_filter) return;  // recorded, not a filter
      const std::string fail = FirstFailure(rules);
      if (!fail.empty()) d.drop = "quality." + fail;
    });
  };
  auto flush_chunk = [&] {
    if (chunk.empty()) return;
    const size_t c = runs.size();
    const std::string run = work + "/docs-" + Padded(c).substr(3) + ".run";
    runs.push_back(run);
    if (RunIsValid(run, fingerprint, c, chunk.size())) {
      ++resumed_runs;
    } else {
      process_chunk();
      const auto t = Clock::now();
      // Key order within the run; a repeated key keeps its read order (the first read stays).
      std::vector<size_t> order(chunk.size());
      for (size_t i = 0; i < order.size(); ++i) order[i] = i;
      std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return chunk[a].rec.key < chunk[b].rec.key;
      });
      Sha256Hasher h;
      SpillWriter w(run + ".tmp", budget.write_buffer());
      std::string bytes;
      for (size_t i : order) {
        DocRecord& d = chunk[i].rec;
        if (!d.drop.empty()) std::string().swap(d.text);  // a dropped text is never used again
        bytes.clear();
        EncodeDocRecord(d, &bytes);
        w.AppendRecord(bytes);
        h.UpdateU64(bytes.size());  // the file's bytes: length prefix, record
        h.Update(bytes.data(), bytes.size());
      }
      w.Close(/*sync=*/true);
      fs::rename(run + ".tmp", run);
      WriteFileAtomic(run + ".meta", nlohmann::json{{"fingerprint", fingerprint},
                                                    {"chunk", c},
                                                    {"documents", chunk.size()},
                                                    {"sha256", ToHex(h.Finish())}}.dump() + "\n");
      checkpoint_seconds += Since(t);
    }
    chunk.clear();
    chunk.shrink_to_fit();
    chunk_bytes = 0;
    // A chunk frees many small allocations across the workers' malloc arenas; hand the free
    // pages back so the next chunk's do not add to them.
    malloc_trim(0);
  };
  {
    ByteProgress progress("read+per-document", input_bytes, opt.progress);
    uint64_t files_done = 0;
    uint32_t first_file = 0;
    for (size_t i = 0; i < cfg.sources.size(); ++i) {
      ReadSource(
          cfg, i, first_file,
          [&](RawDoc&& r) {
            Pending p;
            p.rec.key = std::move(r.key);
            p.rec.source_index = static_cast<uint32_t>(i);
            p.rec.file_index = r.file_index;
            p.rec.offset = r.offset;
            chunk_bytes += r.raw.size() + p.rec.key.size() + sizeof(Pending);
            p.raw = std::move(r.raw);
            chunk.push_back(std::move(p));
            if (chunk_bytes >= budget.chunk()) {
              flush_chunk();
              progress.Update(files_done + r.offset);
            }
          },
          [&](Quarantined&& q) { bad.push_back(std::move(q)); }, warc_skipped,
          [&](uint64_t bytes) {
            files_done += bytes;
            progress.Update(files_done);
          });
      first_file += static_cast<uint32_t>(cfg.sources[i].paths.size());
    }
    flush_chunk();
    progress.Finish();
  }
  lid.reset();
  seconds["read"] = Since(read_start) - stage_seconds - checkpoint_seconds;
  for (const Quarantined& q : bad) ++dropped["read"]["quarantine." + q.reason];
  const uint64_t reader_quarantined = bad.size();

  // ---- Merge the runs by key: ordinals, repeated keys, exact dedup. ----
  auto t = Clock::now();
  const size_t chunk_runs = runs.size();
  // Too many runs to merge at once are merged in consecutive groups first (consecutive, so a
  // repeated key still meets its first read first); the checkpointed runs stay as they are.
  for (int level = 0; runs.size() > budget.merge_fan_in(); ++level) {
    const size_t fan_in = budget.merge_fan_in();
    std::vector<std::string> merged;
    for (size_t g = 0; g * fan_in < runs.size(); ++g) {
      const std::vector<std::string> group(runs.begin() + g * fan_in,
                                           runs.begin() + std::min(runs.size(), (g + 1) * fan_in));
      merged.push_back(work + "/merge-" + std::to_string(level) + "-" + std::to_string(g) + ".run");
      SpillWriter w(merged.back(), budget.write_buffer());
      DocRunMerge merge(group, budget.run_buffer(group.size()));
      std::string bytes;
      for (DocRunMerge::Item it; merge.Next(it);) {
        bytes.clear();
        EncodeDocRecord(it.doc, &bytes);
        w.AppendRecord(bytes);
      }
      w.Close();
      if (level > 0) {
        for (const std::string& r : group) fs::remove(r);
      }
    }
    runs = std::move(merged);
  }
  const size_t run_buffer = budget.run_buffer(runs.size());
  uint64_t documents = 0, bytes_in = 0;
  ExternalSorter<HashOrdinal> by_hash(work, "exact", budget.sort());
  {
    SpillWriter locations(work + "/locations.bin", 1 << 16);
    DocRunMerge merge(runs, run_buffer);
    for (DocRunMerge::Item it; merge.Next(it);) {
      const DocRecord& d = it.doc;
      if (it.repeated) {
        bad.push_back({files[d.file_index], d.offset, 0, d.raw_bytes, "duplicate_id",
                       "key " + d.key + " was already read from " + files[it.first_file],
                       d.raw_sample, d.raw_sha256});
        ++dropped["read"]["quarantine.duplicate_id"];
        continue;
      }
      TRAIL_CHECK(documents < UINT32_MAX, "corpus build: more than 2^32 - 1 documents");
      const Location loc{it.offset, it.run,
                         static_cast<uint32_t>(std::min<uint64_t>(d.text.size(), UINT32_MAX))};
      locations.Append(&loc, sizeof loc);
      const uint32_t ord = static_cast<uint32_t>(documents++);
      bytes_in += d.raw_bytes;
      if (!d.drop_stage.empty()) ++dropped[d.drop_stage][d.drop];
      if (d.drop.empty()) {
        const std::string_view h = d.content_hash;
        TRAIL_CHECK(h.size() == 32, "content hash of ", d.key, " is not 128 bits");
        by_hash.Add({HexU64(h.substr(0, 16)), HexU64(h.substr(16)), ord, 0});
      }
    }
    locations.Close();
  }
  // The smallest ordinal (= key) per content hash survives; the others are listed by ordinal.
  uint64_t spilled = by_hash.spilled_bytes();
  std::unordered_set<uint32_t> exact_survivors;
  {
    ExternalSorter<ExactDup> dups(work, "exact-dups", budget.sort());
    HashOrdinal first{};
    bool any = false;
    by_hash.Drain([&](const HashOrdinal& x) {
      if (any && x.h0 == first.h0 && x.h1 == first.h1) {
        dups.Add({x.ord, first.ord});
        exact_survivors.insert(first.ord);
      } else {
        first = x;
        any = true;
      }
    });
    SpillWriter out(work + "/exact.bin", 1 << 16);
    dups.Drain([&](const ExactDup& x) { out.Append(&x, sizeof x); });
    out.Close();
    spilled += dups.spilled_bytes();
  }
  seconds["exact_dedup"] = Since(t);

  malloc_trim(0);  // a phase is done: its free pages go back
  // ---- Near dedup over the exact survivors still alive, in key order. ----
  t = Clock::now();
  NearDedupRunsInput nd;
  nd.runs = runs;
  nd.run_buffer = run_buffer;
  nd.work = work;
  nd.exact_dups = work + "/exact.bin";
  nd.locations = work + "/locations.bin";
  nd.documents = documents;
  nd.bytes_in = bytes_in;
  nd.ngram = cfg.ngram;
  nd.bands = cfg.bands;
  nd.rows = cfg.rows;
  nd.threshold = cfg.near_threshold;
  nd.seed = cfg.seed;
  nd.sort_budget = budget.sort();
  nd.batch_budget = budget.batch();
  nd.verify_budget = budget.verify_batch();
  nd.progress = opt.progress;
  NearDedupRunsResult near = NearDedupRuns(nd, pool);
  spilled += near.spilled_bytes;
  const uint64_t candidates = near.candidates, verified = near.verified;
  // The keys the final pass needs before it reaches them are those of cluster roots and exact
  // survivors: both smaller than every document that refers to them.
  const std::unordered_map<uint32_t, uint32_t>& root_of = near.root_of;
  std::unordered_map<uint32_t, std::string> key_of;
  for (const auto& [x, root] : root_of) key_of[root];
  for (uint32_t e : exact_survivors) key_of[e];
  seconds["near_dedup"] = Since(t);

  malloc_trim(0);  // a phase is done: its free pages go back
  // ---- PII, decontamination, split, quota, shards and lineage, in key order. ----
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

  const std::string db_path = out_dir + "/lineage.sqlite";
  const std::string tmp = db_path + ".tmp";
  fs::remove(tmp);
  BuildSummary sum;
  sum.documents = documents;
  sum.bytes_in = bytes_in;
  double lineage_seconds = 0, shard_seconds = 0;
  struct Group {
    std::unique_ptr<SpillWriter> file;
    uint64_t count = 0;
    std::vector<uint64_t> shard_bytes;
  };
  std::map<std::pair<int, size_t>, Group> groups;  // (split, source)
  {
    Db db(tmp);
    db.Exec("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA cache_size=-" +
            std::to_string(budget.sqlite_cache_kib()) + "; PRAGMA temp_store=FILE;");
    CreateLineageTables(db);
    db.Exec("BEGIN;");
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
        q.Int(1, idx++).Text(2, std::string(r.rule)).Real(3, r.threshold).Run();
      }
    }

    struct Final {
      DocRecord d;
      std::string exact_survivor, cluster, contaminated_by, shard;
      PiiCounts pii;
      Split split = Split::kTrain;
      uint64_t shard_line = 0;
    };
    std::vector<Final> batch;
    uint64_t batch_bytes = 0;
    std::vector<uint64_t> kept_per_source(cfg.sources.size(), 0);
    StageProgress progress("pii/decontamination/shards", documents, bytes_in, opt.progress);
    auto flush = [&] {
      auto t0 = Clock::now();
      pool.ParallelFor(batch.size(), [&](size_t i) {
        Final& f = batch[i];
        if (!f.d.drop.empty()) return;
        if (cfg.pii) {
          PiiResult p = RedactPii(f.d.text);
          f.pii = p.counts;
          f.d.text = std::move(p.text);
        }
        if (contam) {
          DecontamOutcome o = Decontaminate(f.d.text, *contam, dc);
          if (!o.hits.empty()) f.contaminated_by = std::to_string(o.hits.size()) + " n-gram hits";
          if (o.dropped) {
            f.d.drop = "contaminated";
          } else {
            f.d.text = std::move(o.text);
          }
        }
      });
      seconds["pii_decontamination"] += Since(t0);
      t0 = Clock::now();
      // Split by cluster, then per-source quotas (smallest keys first), then the shard line.
      for (Final& f : batch) {
        DocRecord& d = f.d;
        if (d.drop == "contaminated") ++dropped["pii_decontamination"]["contaminated"];
        if (!f.cluster.empty()) f.split = SplitOfCluster(f.cluster, cfg.seed, cfg.train, cfg.validation);
        if (!d.drop.empty()) continue;
        const uint64_t quota = cfg.sources[d.source_index].quota;
        if (quota > 0 && kept_per_source[d.source_index] >= quota) {
          d.drop = "quota";
          ++dropped["split_quota"]["quota"];
          continue;
        }
        ++kept_per_source[d.source_index];
        Group& g = groups[{static_cast<int>(f.split), d.source_index}];
        const std::string split = SplitName(f.split);
        if (!g.file) {
          g.file = std::make_unique<SpillWriter>(
              work + "/group-" + split + "-" + std::to_string(d.source_index) + ".jsonl", 1 << 16);
        }
        const uint64_t shard = g.count / cfg.shard_documents;
        f.shard = split + "/" + cfg.sources[d.source_index].name + "-" + Padded(shard).substr(3) +
                  ".jsonl.zst";
        f.shard_line = g.count % cfg.shard_documents + 1;
        ++g.count;
        const std::string line =
            Json{{"id", d.key}, {"text", d.text}, {"source", cfg.sources[d.source_index].name},
                 {"metadata", Json{{"language", d.lang.language}, {"cluster", f.cluster}}}}
                .dump() + "\n";
        if (g.shard_bytes.size() <= shard) g.shard_bytes.push_back(0);
        g.shard_bytes[shard] += line.size();
        g.file->Append(line.data(), line.size());
        sum.bytes_out += d.text.size();
        ++sum.kept;
      }
      shard_seconds += Since(t0);
      t0 = Clock::now();
      for (const Final& f : batch) {
        const DocRecord& d = f.d;
        ins.Text(1, d.key).Text(2, cfg.sources[d.source_index].name).Text(3, files[d.file_index])
            .Int(4, static_cast<int64_t>(d.offset)).Int(5, static_cast<int64_t>(d.raw_bytes))
            .Text(6, d.norm.encoding).Int(7, d.norm.detected)
            .Int(8, static_cast<int64_t>(d.norm.replaced))
            .Int(9, static_cast<int64_t>(d.norm.controls_removed)).Text(10, d.content_hash)
            .Text(11, d.lang.language).Real(12, d.lang.score).Text(13, f.exact_survivor)
            .Text(14, f.cluster).Int(15, static_cast<int64_t>(f.pii.email))
            .Int(16, static_cast<int64_t>(f.pii.phone)).Int(17, static_cast<int64_t>(f.pii.ip))
            .Int(18, static_cast<int64_t>(f.pii.secret)).Text(19, f.contaminated_by)
            .Text(20, f.cluster.empty() ? "" : SplitName(f.split)).Int(21, d.drop.empty())
            .Text(22, d.drop).Text(23, f.shard).Int(24, static_cast<int64_t>(f.shard_line));
        if (d.rules_json.empty()) {
          sqlite3_bind_null(ins.get(), 25);
        } else {
          ins.Text(25, d.rules_json);
        }
        ins.Run();
      }
      lineage_seconds += Since(t0);
      batch.clear();
      batch_bytes = 0;
    };

    SpillReader exact(work + "/exact.bin", 1 << 16);
    ExactDup next_dup{UINT32_MAX, 0};
    if (!exact.Read(&next_dup, sizeof next_dup)) next_dup.ord = UINT32_MAX;
    DocRunMerge merge(runs, run_buffer);
    uint32_t ord = 0;
    for (DocRunMerge::Item it; merge.Next(it);) {
      if (it.repeated) continue;
      Final f;
      f.d = std::move(it.doc);
      const bool dup = next_dup.ord == ord;
      const uint32_t survivor = dup ? next_dup.survivor : ord;
      if (dup && !exact.Read(&next_dup, sizeof next_dup)) next_dup.ord = UINT32_MAX;
      if (const auto k = key_of.find(ord); k != key_of.end()) k->second = f.d.key;
      if (f.d.drop.empty()) {
        // Exact duplicates belong to their survivor's cluster.
        const auto r = root_of.find(survivor);
        const uint32_t root = r == root_of.end() ? survivor : r->second;
        f.exact_survivor = dup ? key_of.at(survivor) : f.d.key;
        f.cluster = root == ord ? f.d.key : key_of.at(root);
        if (dup) {
          f.d.drop = "exact_dup";
          ++dropped["exact_dedup"]["exact_dup"];
        } else if (root != ord) {
          f.d.drop = "near_dup";
          ++dropped["near_dedup"]["near_dup"];
        }
        if (!f.d.drop.empty()) std::string().swap(f.d.text);
      }
      batch_bytes += f.d.text.size() + sizeof(Final);
      batch.push_back(std::move(f));
      if (batch_bytes >= budget.batch()) flush();
      ++ord;
      progress.Tick();
    }
    flush();
    progress.Finish();
    const auto t0 = Clock::now();
    Stmt qi(db.get(), "INSERT INTO quarantine VALUES (?,?,?,?,?,?,?,?)");
    for (const Quarantined& q : bad) {
      qi.Text(1, q.file).Int(2, static_cast<int64_t>(q.offset)).Int(3, static_cast<int64_t>(q.line))
          .Int(4, static_cast<int64_t>(q.bytes)).Text(5, q.reason).Text(6, q.detail)
          .Text(7, q.sample).Text(8, q.sha256).Run();
    }
    db.Exec("COMMIT;");
    lineage_seconds += Since(t0);
  }
  malloc_trim(0);  // a phase is done: its free pages go back
  fs::rename(tmp, db_path);

  // Shards: per (split, source), key order, shard_documents per file, compressed one at a time.
  t = Clock::now();
  {
    std::unique_ptr<ZSTD_CCtx, decltype(&ZSTD_freeCCtx)> cctx(ZSTD_createCCtx(), ZSTD_freeCCtx);
    for (auto& [g, group] : groups) {
      const std::string split = SplitName(static_cast<Split>(g.first));
      fs::create_directories(out_dir + "/" + split);
      group.file->Close();
      SpillReader in(work + "/group-" + split + "-" + std::to_string(g.second) + ".jsonl", 1 << 16);
      for (size_t s = 0; s < group.shard_bytes.size(); ++s) {
        const std::string rel = split + "/" + cfg.sources[g.second].name + "-" +
                                Padded(s).substr(3) + ".jsonl.zst";
        CompressInto(in, group.shard_bytes[s], out_dir + "/" + rel, cctx.get());
        ++sum.shards;
      }
    }
  }
  seconds["shards"] = shard_seconds + Since(t);
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
  if (resumed_runs > 0) {
    rep["resumed"] = "per-document stages (normalize, language, quality) restored for " +
                     std::to_string(resumed_runs) + " of " + std::to_string(chunk_runs) +
                     " document runs from .work/";
  }
  rep["checkpoint_seconds"] = checkpoint_seconds;
  sum.quarantined = bad.size();
  Json st = Json::array();
  const auto repeated = dropped["read"].find("quarantine.duplicate_id");
  uint64_t live = documents + reader_quarantined +
                  (repeated == dropped["read"].end() ? 0 : repeated->second);
  for (const char* name : kStages) {
    uint64_t n = 0;
    Json drops = Json::object();
    for (const auto& [r, c] : dropped[name]) {
      drops[r] = c;
      n += c;
    }
    st.push_back(Json{{"stage", name}, {"in", live}, {"out", live - n}, {"dropped", drops},
                      {"seconds", seconds[name]}});
    live -= n;
  }
  rep["stages"] = st;
  rep["lineage_seconds"] = lineage_seconds;
  rep["near_dedup"] = Json{{"candidate_pairs", candidates}, {"verified_pairs", verified}};
  rep["memory"] = Json{{"budget_bytes", budget.total}, {"peak_rss_bytes", MemoryWatch::PeakRssBytes()},
                       {"peak_anon_bytes", memory.peak_anon_bytes()},
                       {"document_runs", chunk_runs}, {"spilled_sort_bytes", spilled}};
  sum.report_json = rep.dump(2) + "\n";
  WriteFileAtomic(out_dir + "/report.json", sum.report_json);
  fs::remove_all(work);  // the build is complete: nothing left to resume
  return sum;
}

}  // namespace trail::corpus
