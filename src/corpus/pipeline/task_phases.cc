// The phases of a corpus build in tasks (pipeline.h; formats in pipeline/task_records.h,
// near_tasks.h).
#include <malloc.h>

#include <filesystem>

#include "core/error.h"
#include "core/task_files.h"
#include "corpus/pipeline/build_phases.h"
#include "corpus/pipeline/task_records.h"
#include "corpus/pipeline/build_work.h"
#include "corpus/dedup/exact_phase.h"
#include "corpus/dedup/near_tasks.h"
#include "corpus/pipeline/pipeline.h"
#include "corpus/pipeline/read_phase.h"

namespace trail::corpus {
namespace {
namespace fs = std::filesystem;

// The read tasks' records as the one-process read phase would have left them in the report.
void AddReadTasks(std::vector<ReadTaskRecord>& tasks, BuildReport& report,
                  std::vector<std::string>& runs) {
  report.read_tasks = tasks.size();
  for (ReadTaskRecord& t : tasks) {
    runs.insert(runs.end(), t.runs.begin(), t.runs.end());
    for (Quarantined& q : t.quarantined) report.quarantined.push_back(std::move(q));
    report.warc_skipped += t.warc_skipped;
    report.resumed_runs += t.resumed_runs;
    report.checkpoint_seconds += t.checkpoint_seconds;
    for (const auto& [stage, s] : t.seconds) report.seconds[stage] += s;
  }
  report.document_runs = runs.size();
  for (const Quarantined& q : report.quarantined)
    ++report.dropped["read"]["quarantine." + q.reason];
  report.reader_quarantined = report.quarantined.size();
}

// The near tasks' pairs files, after checking the index against the read tasks and every near
// task against the index; throws naming each one that fails.
std::vector<std::string> VerifiedNearPairs(const CorpusConfig& cfg, const std::string& out_dir,
                                           uint32_t tasks, uint32_t near_tasks,
                                           const std::string& read_digest) {
  const IndexRecord index = VerifyIndex(cfg, out_dir, tasks, near_tasks, read_digest, {});
  std::vector<std::string> problems, pairs;
  for (uint32_t p = 0; p < near_tasks; ++p) {
    const std::string why = CheckNearTask(out_dir, p, near_tasks, index.digest);
    if (!why.empty()) problems.push_back("near task " + std::to_string(p) + ": " + why);
    pairs.push_back(NearTaskDirectory(out_dir, p, near_tasks) + "/pairs.bin");
  }
  if (!problems.empty()) {
    TRAIL_FAIL("the final phase needs all ", near_tasks, " near tasks complete and intact; ",
               problems.size(), " of them are not (in ", NearTasksDirectory(out_dir, near_tasks),
               "):", ProblemLines(problems), "\nRun each of these again (--tasks ", tasks,
               " --near-tasks ", near_tasks, " --phase near --task P), then this phase again.");
  }
  return pairs;
}

}  // namespace

ReadTaskSummary RunReadTask(const CorpusConfig& cfg, const std::string& out_dir, uint32_t task,
                            uint32_t tasks, const BuildOptions& opt) {
  const Budget budget = BudgetOf(cfg, opt);
  fs::create_directories(ReadTasksDirectory(out_dir, tasks));
  const TaskLock lock(ReadTaskDirectory(out_dir, task, tasks) + ".lock");
  const ReadTaskPlan plan = PlanReadTask(cfg, out_dir, task, tasks, budget.total);
  ReadTaskSummary sum;
  sum.dir = plan.dir;
  sum.first_file = plan.files.begin;
  sum.end_file = plan.files.end;
  for (uint32_t f = plan.files.begin; f < plan.files.end; ++f) sum.bytes += plan.bytes[f];
  if (ReadTaskIsComplete(cfg, plan)) {
    sum.already_complete = true;
    return sum;
  }
  ReturnLargeBlocksToTheKernel();
  ThreadPool pool(static_cast<size_t>(std::max(1, opt.threads)));
  PrepareReadTaskDirectory(plan);
  BuildReport report;
  ReadTaskRecord record;
  record.runs = ReadIntoDocRuns(cfg, budget, plan.dir, plan.fingerprint, pool, opt.progress, report,
                                plan.files);
  record.quarantined = std::move(report.quarantined);
  record.warc_skipped = report.warc_skipped;
  record.resumed_runs = report.resumed_runs;
  record.checkpoint_seconds = report.checkpoint_seconds;
  for (const auto& [stage, s] : report.seconds) record.seconds.push_back({stage, s});
  WriteReadTaskManifest(cfg, plan, record);
  sum.runs = record.runs.size();
  sum.resumed_runs = record.resumed_runs;
  sum.quarantined = record.quarantined.size();
  return sum;
}

PhaseSummary RunIndexPhase(const CorpusConfig& cfg, const std::string& out_dir, uint32_t tasks,
                           uint32_t near_tasks, const BuildOptions& opt) {
  TRAIL_CHECK(near_tasks > 0, "the index phase needs --near-tasks M (M >= 1)");
  std::string read_digest;
  std::vector<ReadTaskRecord> records = VerifyReadTasks(cfg, out_dir, tasks, &read_digest);
  PhaseSummary sum;
  sum.dir = IndexDirectory(out_dir, near_tasks);
  fs::create_directories(NearTasksDirectory(out_dir, near_tasks));
  const TaskLock lock(sum.dir + ".lock");
  if (IndexIsComplete(cfg, out_dir, tasks, near_tasks, read_digest)) {
    sum.already_complete = true;
    return sum;
  }
  fs::remove_all(sum.dir);  // an earlier attempt's files: redone whole
  fs::create_directories(sum.dir);
  const Budget budget = BudgetOf(cfg, opt);
  ReturnLargeBlocksToTheKernel();
  std::vector<std::string> runs;
  for (const ReadTaskRecord& r : records) runs.insert(runs.end(), r.runs.begin(), r.runs.end());
  runs = MergeDocRunGroups(std::move(runs), budget, sum.dir);
  const size_t run_buffer = budget.run_buffer(runs.size());
  BuildReport scratch;  // the counts are the final phase's, which redoes this merge
  const ExactDedupResult exact =
      ExactDedup(runs, run_buffer, BuildFileList(cfg), budget, sum.dir, scratch);
  malloc_trim(0);
  std::vector<std::string> partitions;
  for (uint32_t p = 0; p < near_tasks; ++p)
    partitions.push_back(sum.dir + "/" + BandPartitionName(p));
  WriteBandPartitions(NearDedupInput(cfg, budget, sum.dir, runs, run_buffer, exact.documents,
                                     exact.bytes_in, opt.progress),
                      partitions);
  WriteIndexManifest(
      cfg, out_dir,
      IndexRecord{tasks, near_tasks, read_digest, runs, exact.documents, exact.bytes_in, ""});
  sum.documents = exact.documents;
  return sum;
}

PhaseSummary RunNearTask(const CorpusConfig& cfg, const std::string& out_dir, uint32_t task,
                         uint32_t tasks, uint32_t near_tasks, const BuildOptions& opt) {
  TRAIL_CHECK(near_tasks > 0 && task < near_tasks, "--task ", task,
              " is not a near task of --near-tasks ", near_tasks, ": near tasks are numbered 0 to ",
              near_tasks - 1);
  const IndexRecord index =
      VerifyIndex(cfg, out_dir, tasks, near_tasks, "", {"locations.bin", BandPartitionName(task)});
  PhaseSummary sum;
  sum.dir = NearTaskDirectory(out_dir, task, near_tasks);
  const TaskLock lock(sum.dir + ".lock");
  if (CheckNearTask(out_dir, task, near_tasks, index.digest).empty()) {
    sum.already_complete = true;
    return sum;
  }
  fs::remove_all(sum.dir);
  fs::create_directories(sum.dir);
  const Budget budget = BudgetOf(cfg, opt);
  ReturnLargeBlocksToTheKernel();
  ThreadPool pool(static_cast<size_t>(std::max(1, opt.threads)));
  const std::string index_dir = IndexDirectory(out_dir, near_tasks);
  NearDedupRunsInput nd =
      NearDedupInput(cfg, budget, sum.dir, index.runs, budget.run_buffer(index.runs.size()),
                     index.documents, index.bytes_in, opt.progress);
  nd.locations = index_dir + "/locations.bin";
  const PartitionCounts counts = NearDedupPartition(nd, index_dir + "/" + BandPartitionName(task),
                                                    sum.dir + "/pairs.bin", pool);
  WriteNearTaskManifest(sum.dir, task, near_tasks, index.digest,
                        NearTaskRecord{counts.candidates, counts.verified});
  sum.documents = counts.candidates;
  return sum;
}

BuildSummary BuildCorpusFromTasks(const CorpusConfig& cfg, const std::string& out_dir,
                                  uint32_t tasks, const BuildOptions& opt, uint32_t near_tasks) {
  const Budget budget = BudgetOf(cfg, opt);
  // Verified before anything in out_dir is touched: a refused final phase loses nothing.
  std::string fingerprint;
  std::vector<ReadTaskRecord> records = VerifyReadTasks(cfg, out_dir, tasks, &fingerprint);
  const std::vector<std::string> pairs =
      near_tasks > 0 ? VerifiedNearPairs(cfg, out_dir, tasks, near_tasks, fingerprint)
                     : std::vector<std::string>{};
  ReturnLargeBlocksToTheKernel();
  const MemoryWatch memory;
  ThreadPool pool(static_cast<size_t>(std::max(1, opt.threads)));
  BuildReport report;
  report.budget_bytes = budget.total;
  std::vector<std::string> runs;
  AddReadTasks(records, report, runs);
  const std::string work = PrepareWorkDirectory(out_dir, fingerprint);
  BuildSummary sum = CrossDocumentPhases(cfg, out_dir, budget, work, std::move(runs), opt, pool,
                                         memory, report, pairs);
  // Complete: the tasks' outputs are spent.
  fs::remove_all(ReadTasksDirectory(out_dir, tasks));
  if (near_tasks > 0) fs::remove_all(NearTasksDirectory(out_dir, near_tasks));
  std::error_code ignored;  // .tasks itself goes when no other task count's outputs remain
  fs::remove(out_dir + "/.tasks", ignored);
  return sum;
}

}  // namespace trail::corpus
