#include "corpus/pipeline/pipeline.h"

#include <malloc.h>

#include <chrono>
#include <filesystem>

#include "core/file_util.h"
#include "core/hash.h"
#include "core/thread_pool.h"
#include "core/timing.h"
#include "corpus/pipeline/build_budget.h"
#include "corpus/pipeline/build_phases.h"
#include "corpus/pipeline/build_report.h"
#include "corpus/pipeline/build_work.h"
#include "corpus/dedup/exact_phase.h"
#include "corpus/pipeline/final_pass.h"
#include "corpus/pipeline/lineage_writer.h"
#include "corpus/pipeline/memory_watch.h"
#include "corpus/dedup/near_dedup_runs.h"
#include "corpus/filters/quality.h"
#include "corpus/pipeline/read_phase.h"
#include "corpus/pipeline/shard_groups.h"

namespace trail::corpus {
namespace {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

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

Budget BudgetOf(const CorpusConfig& cfg, const BuildOptions& opt) {
  return Budget{opt.memory_budget_bytes ? opt.memory_budget_bytes : cfg.memory_budget_bytes};
}

void ReturnLargeBlocksToTheKernel() { mallopt(M_MMAP_THRESHOLD, 256 << 10); }

NearDedupRunsInput NearDedupInput(const CorpusConfig& cfg, const Budget& budget,
                                  const std::string& work, const std::vector<std::string>& runs,
                                  size_t run_buffer, uint64_t documents, uint64_t bytes_in,
                                  bool progress) {
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
  nd.threshold = cfg.near_threshold;
  nd.sort_budget = budget.sort();
  nd.verify_budget = budget.verify_batch();
  nd.progress = progress;
  return nd;
}

BuildSummary CrossDocumentPhases(const CorpusConfig& cfg, const std::string& out_dir,
                                 const Budget& budget, const std::string& work,
                                 std::vector<std::string> runs, const BuildOptions& opt,
                                 ThreadPool& pool, const MemoryWatch& memory, BuildReport& report,
                                 const std::vector<std::string>& near_pairs) {
  const std::vector<std::string> files = BuildFileList(cfg);
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
      near_pairs.empty()
          ? NearDedupRuns(NearDedupInput(cfg, budget, work, runs, run_buffer, exact.documents,
                                         exact.bytes_in, opt.progress),
                          pool)
          : ClustersFromPairs(near_pairs);
  report.spilled_sort_bytes += near.spilled_bytes;
  report.candidate_pairs = near.candidates;
  report.verified_pairs = near.verified;
  report.seconds["near_dedup"] += SecondsSince(t);  // after the signatures' time
  malloc_trim(0);
  // 4. PII, decontamination, split, quota, shard lines and lineage, in key order.
  BuildSummary sum;
  sum.documents = exact.documents;
  sum.bytes_in = exact.bytes_in;
  ShardGroups shards(work, cfg.shard_documents, SourceNames(cfg));
  {
    LineageWriter lineage(out_dir + "/lineage.sqlite", budget.sqlite_cache_kib());
    WriteLineageHeader(cfg, lineage);
    FinalPassInput in{runs,
                      run_buffer,
                      work + "/exact.bin",
                      std::move(exact.survivors),
                      std::move(near.root_of),
                      sum.documents,
                      sum.bytes_in};
    RunFinalPass(cfg, budget, files, in, pool, opt.progress, lineage, shards, sum, report);
    t = Clock::now();
    for (const Quarantined& q : report.quarantined) lineage.AddQuarantined(q);
    lineage.Commit();
    report.lineage_seconds += SecondsSince(t);
  }
  malloc_trim(0);
  // 5. Shards, quarantine file, report.
  t = Clock::now();
  sum.shards = shards.Compress(out_dir, pool);
  report.seconds["shards"] += SecondsSince(t);
  WriteQuarantineFile(report.quarantined, out_dir + "/quarantine.jsonl");
  sum.quarantined = report.quarantined.size();
  report.peak_anon_bytes = memory.peak_anon_bytes();
  sum.stages = report.Stages(sum.documents), sum.memory = report.Memory();
  sum.report_json = report.ToJson(sum);
  WriteFileAtomic(out_dir + "/report.json", sum.report_json);
  fs::remove_all(work);  // the build is complete: nothing left to resume
  return sum;
}

BuildSummary BuildCorpus(const CorpusConfig& cfg, const std::string& out_dir, int threads) {
  BuildOptions opt;
  opt.threads = threads;
  return BuildCorpus(cfg, out_dir, opt);
}

BuildSummary BuildCorpus(const CorpusConfig& cfg, const std::string& out_dir,
                         const BuildOptions& opt) {
  const Budget budget = BudgetOf(cfg, opt);
  fs::create_directories(out_dir);
  ReturnLargeBlocksToTheKernel();
  const MemoryWatch memory;
  ThreadPool pool(static_cast<size_t>(std::max(1, opt.threads)));
  BuildReport report;
  report.budget_bytes = budget.total;
  const std::string fingerprint = InputFingerprint(cfg, budget.total);
  const std::string work = PrepareWorkDirectory(out_dir, fingerprint);
  // 1. Read, normalize, language, quality: chunk by chunk into document runs.
  std::vector<std::string> runs =
      ReadIntoDocRuns(cfg, budget, work, fingerprint, pool, opt.progress, report);
  return CrossDocumentPhases(cfg, out_dir, budget, work, std::move(runs), opt, pool, memory,
                             report);
}

}  // namespace trail::corpus
