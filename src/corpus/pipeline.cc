#include "corpus/pipeline.h"

#include <malloc.h>

#include <chrono>
#include <filesystem>

#include "core/file_util.h"
#include "core/hash.h"
#include "core/thread_pool.h"
#include "core/timing.h"
#include "corpus/build_budget.h"
#include "corpus/build_report.h"
#include "corpus/build_work.h"
#include "corpus/exact_phase.h"
#include "corpus/final_pass.h"
#include "corpus/lineage_writer.h"
#include "corpus/memory_watch.h"
#include "corpus/near_dedup_runs.h"
#include "corpus/quality.h"
#include "corpus/read_phase.h"
#include "corpus/shard_groups.h"

namespace trail::corpus {
namespace {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

NearDedupRunsResult RunNearDedup(const CorpusConfig& cfg, const Budget& budget,
                                 const std::string& work, const std::vector<std::string>& runs,
                                 size_t run_buffer, const ExactDedupResult& exact, bool progress,
                                 ThreadPool& pool) {
  NearDedupRunsInput nd;
  nd.runs = runs;
  nd.run_buffer = run_buffer;
  nd.work = work;
  nd.exact_dups = work + "/exact.bin";
  nd.locations = work + "/locations.bin";
  nd.documents = exact.documents;
  nd.bytes_in = exact.bytes_in;
  nd.ngram = cfg.ngram;
  nd.bands = cfg.bands;
  nd.rows = cfg.rows;
  nd.threshold = cfg.near_threshold;
  nd.seed = cfg.seed;
  nd.sort_budget = budget.sort();
  nd.batch_budget = budget.batch();
  nd.verify_budget = budget.verify_batch();
  nd.progress = progress;
  return NearDedupRuns(nd, pool);
}

std::vector<std::string> SourceNames(const CorpusConfig& cfg) {
  std::vector<std::string> names;
  for (const SourceConfig& s : cfg.sources) names.push_back(s.name);
  return names;
}

// The lineage's run table and rule list: config hash, stage versions, seed.
void WriteLineageHeader(const CorpusConfig& cfg, LineageWriter& lineage) {
  const Digest cfg_hash =
      Sha256({reinterpret_cast<const uint8_t*>(cfg.text.data()), cfg.text.size()});
  lineage.AddRunInfo("config_sha256", ToHex(cfg_hash));
  lineage.AddRunInfo("stage_versions", kStageVersions);
  lineage.AddRunInfo("seed", std::to_string(cfg.seed));
  // The rule list (names, thresholds) is the config's: the same for every document.
  lineage.AddQualityRules(QualityRules("", cfg.quality_cfg));
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
  BuildReport report;
  report.budget_bytes = budget.total;
  const std::string fingerprint = InputFingerprint(cfg, budget.total);
  const std::string work = PrepareWorkDirectory(out_dir, fingerprint);
  const std::vector<std::string> files = BuildFileList(cfg);

  // 1. Read, normalize, language, quality: chunk by chunk into document runs.
  std::vector<std::string> runs =
      ReadIntoDocRuns(cfg, budget, work, fingerprint, pool, opt.progress, report);
  // 2. Merge by key: ordinals, repeated keys, exact dedup.
  auto t = Clock::now();
  runs = MergeDocRunGroups(std::move(runs), budget, work);
  report.seconds["exact_dedup"] = SecondsSince(t);
  const size_t run_buffer = budget.run_buffer(runs.size());
  ExactDedupResult exact = ExactDedup(runs, run_buffer, files, budget, work, report);
  malloc_trim(0);  // a phase is done: its free pages go back
  // 3. Near dedup over the exact survivors still alive, in key order.
  t = Clock::now();
  NearDedupRunsResult near =
      RunNearDedup(cfg, budget, work, runs, run_buffer, exact, opt.progress, pool);
  report.spilled_sort_bytes += near.spilled_bytes;
  report.candidate_pairs = near.candidates;
  report.verified_pairs = near.verified;
  report.seconds["near_dedup"] = SecondsSince(t);
  malloc_trim(0);
  // 4. PII, decontamination, split, quota, shard lines and lineage, in key order.
  BuildSummary sum;
  sum.documents = exact.documents;
  sum.bytes_in = exact.bytes_in;
  ShardGroups shards(work, cfg.shard_documents, SourceNames(cfg));
  {
    LineageWriter lineage(out_dir + "/lineage.sqlite", budget.sqlite_cache_kib());
    WriteLineageHeader(cfg, lineage);
    FinalPassInput in{runs, run_buffer, work + "/exact.bin", std::move(exact.survivors),
                      std::move(near.root_of), sum.documents, sum.bytes_in};
    RunFinalPass(cfg, budget, files, in, pool, opt.progress, lineage, shards, sum, report);
    t = Clock::now();
    for (const Quarantined& q : report.quarantined) lineage.AddQuarantined(q);
    lineage.Commit();
    report.lineage_seconds += SecondsSince(t);
  }
  malloc_trim(0);
  // 5. Shards, quarantine file, report.
  t = Clock::now();
  sum.shards = shards.Compress(out_dir);
  report.seconds["shards"] += SecondsSince(t);
  WriteQuarantineFile(report.quarantined, out_dir + "/quarantine.jsonl");
  sum.quarantined = report.quarantined.size();
  report.peak_anon_bytes = memory.peak_anon_bytes();
  sum.report_json = report.ToJson(sum);
  WriteFileAtomic(out_dir + "/report.json", sum.report_json);
  fs::remove_all(work);  // the build is complete: nothing left to resume
  return sum;
}

}  // namespace trail::corpus
