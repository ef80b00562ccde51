#include "cli/corpus_cmd.h"

#include <CLI/CLI.hpp>

#include <algorithm>

#include <cstdio>
#include <string>

#include "core/error.h"
#include "corpus/pipeline/config.h"
#include "corpus/pipeline/pipeline.h"
#include "corpus/pipeline/tokens.h"

namespace trail::cli {
namespace {

// The report as a table: per stage, documents in and out, MB/s of the build's input, and the
// most frequent drop reasons.
void PrintSummaryTable(const corpus::BuildSummary& s) {
  const double mb = static_cast<double>(s.bytes_in) / 1e6;
  std::fprintf(stderr, "  %-20s %10s %10s %9s %9s  %s\n", "stage", "in", "out", "seconds", "MB/s",
               "dropped (top reasons)");
  for (const corpus::StageCount& st : s.stages) {
    std::vector<std::pair<uint64_t, std::string>> reasons;
    for (const auto& [k, v] : st.dropped) reasons.push_back({v, k});
    std::sort(reasons.rbegin(), reasons.rend());
    std::string top;
    for (size_t i = 0; i < reasons.size() && i < 3; ++i) {
      top += (i ? ", " : "") + reasons[i].second + " " + std::to_string(reasons[i].first);
    }
    if (reasons.size() > 3) top += ", ...";
    std::fprintf(stderr, "  %-20s %10llu %10llu %9.3f %9.1f  %s\n", st.stage.c_str(),
                 (unsigned long long)st.in, (unsigned long long)st.out, st.seconds,
                 st.seconds > 0 ? mb / st.seconds : 0.0, top.c_str());
  }
  const corpus::BuildMemory& m = s.memory;
  std::fprintf(stderr,
               "  memory: peak RSS %.0f MiB (budget %.0f MiB), %llu document runs, %.1f MB of "
               "sort runs spilled\n",
               double(m.peak_rss_bytes) / 1048576, double(m.budget_bytes) / 1048576,
               (unsigned long long)m.document_runs, double(m.spilled_sort_bytes) / 1e6);
}

}  // namespace

void AddCorpusCommand(CLI::App& app, CorpusCommand& cmd) {
  cmd.corpus = app.add_subcommand("corpus",
                                  "The corpus factory: raw documents to clean shards with lineage");
  cmd.corpus->require_subcommand(1);
  cmd.build = cmd.corpus->add_subcommand(
      "build",
      "Normalize, filter, deduplicate, split and shard; writes lineage.sqlite and report.json");
  cmd.build->add_option("--config", cmd.config, "corpus.toml")->required();
  cmd.build->add_option("--out", cmd.out, "Output directory")->required();
  cmd.build->add_option("--threads", cmd.threads, "Worker threads")->check(CLI::Range(1, 1024));
  cmd.build->add_flag("--quiet", cmd.quiet, "No progress lines");
  cmd.build
      ->add_option("--memory-budget-mb", cmd.memory_budget_mb,
                   "Working memory in MiB (overrides the config's memory_budget_mb)")
      ->check(CLI::Range(corpus::kMinMemoryBudgetMb, int64_t{1} << 30));
  cmd.build
      ->add_option("--tasks", cmd.tasks,
                   "Build in this many read tasks plus a final phase (any scheduler runs "
                   "them; docs/corpus.md, \"A build in tasks\")")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  cmd.build
      ->add_option("--near-tasks", cmd.near_tasks,
                   "Near dedup in this many hash-partitioned tasks (phases index and near) "
                   "instead of inside the final phase")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  cmd.build
      ->add_option("--task", cmd.task,
                   "The task to run: a read task 0 .. tasks-1, or with --phase near a near "
                   "task 0 .. near-tasks-1")
      ->check(CLI::Range(int64_t{0}, (int64_t{1} << 20) - 1));
  cmd.build
      ->add_option("--phase", cmd.phase,
                   "read (a task: needs --task), index and near (with --near-tasks; near "
                   "needs --task) or final; default: read with --task, final without")
      ->check(CLI::IsMember({"read", "index", "near", "final"}));
  cmd.tokenize = cmd.corpus->add_subcommand(
      "tokenize",
      "Tokenize a build's shards per split and source, add token shards and ranges to "
      "the lineage, and measure each source's token share next to its document share");
  cmd.tokenize->add_option("--out", cmd.out, "The build's output directory")->required();
  cmd.tokenize->add_option("--contract", cmd.contract, "tokenizer.contract.json")->required();
  cmd.tokenize->add_option("--threads", cmd.threads, "Encoding threads")
      ->check(CLI::Range(1, 1024));
  cmd.tokenize
      ->add_option("--shard-tokens", cmd.shard_tokens, "Close a token shard at this many tokens")
      ->capture_default_str();
  cmd.tokenize
      ->add_option("--tasks", cmd.tasks,
                   "Tokenize in this many encode tasks plus a final phase (docs/corpus.md)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  cmd.tokenize
      ->add_option("--task", cmd.task,
                   "The encode task to run, 0 .. tasks-1 (with --tasks); without it, the "
                   "final phase")
      ->check(CLI::Range(int64_t{0}, (int64_t{1} << 20) - 1));
  cmd.why = cmd.corpus->add_subcommand("why", "Why a document was kept or dropped");
  cmd.why->add_option("--out", cmd.out, "The build's output directory")->required();
  cmd.why->add_option("key", cmd.key, "Document key")->required();
}

namespace {

// One read task of a build in tasks: prints what it did (or that it was already complete).
int RunReadTaskCommand(const CorpusCommand& cmd, const corpus::BuildOptions& opt) {
  TRAIL_CHECK(cmd.task >= 0 && cmd.task < cmd.tasks, "--task ", cmd.task,
              " is not a task of --tasks ", cmd.tasks, ": tasks are numbered 0 to ", cmd.tasks - 1);
  const corpus::ReadTaskSummary s =
      corpus::RunReadTask(corpus::LoadCorpusConfig(cmd.config), cmd.out,
                          static_cast<uint32_t>(cmd.task), static_cast<uint32_t>(cmd.tasks), opt);
  const std::string what =
      "read task " + std::to_string(cmd.task) + " of " + std::to_string(cmd.tasks);
  if (s.already_complete) {
    std::fprintf(stderr, "corpus: %s was already complete -> %s\n", what.c_str(), s.dir.c_str());
    return 0;
  }
  std::fprintf(stderr,
               "corpus: %s: input files %u..%u (%.1f MB), %llu document runs (%llu "
               "reused), %llu records quarantined -> %s\n",
               what.c_str(), s.first_file, s.end_file, s.bytes / 1e6, (unsigned long long)s.runs,
               (unsigned long long)s.resumed_runs, (unsigned long long)s.quarantined,
               s.dir.c_str());
  return 0;
}

// The index phase or one near task of a build in tasks.
int RunNearPhaseCommand(const CorpusCommand& cmd, const std::string& phase,
                        const corpus::BuildOptions& opt) {
  TRAIL_CHECK(cmd.near_tasks > 0, "the ", phase, " phase needs --near-tasks M");
  const corpus::CorpusConfig cfg = corpus::LoadCorpusConfig(cmd.config);
  const auto tasks = static_cast<uint32_t>(cmd.tasks), near = static_cast<uint32_t>(cmd.near_tasks);
  if (phase == "index") {
    TRAIL_CHECK(cmd.task < 0, "the index phase is one task: no --task");
    const corpus::PhaseSummary s = corpus::RunIndexPhase(cfg, cmd.out, tasks, near, opt);
    std::fprintf(stderr, "corpus: index for %u near tasks %s: %llu documents -> %s\n", near,
                 s.already_complete ? "was already complete" : "done",
                 (unsigned long long)s.documents, s.dir.c_str());
    return 0;
  }
  TRAIL_CHECK(cmd.task >= 0, "the near phase runs one task: give --task P (0 .. ", near - 1, ")");
  const corpus::PhaseSummary s =
      corpus::RunNearTask(cfg, cmd.out, static_cast<uint32_t>(cmd.task), tasks, near, opt);
  if (s.already_complete) {
    std::fprintf(stderr, "corpus: near task %lld of %u was already complete -> %s\n",
                 (long long)cmd.task, near, s.dir.c_str());
  } else {
    std::fprintf(stderr, "corpus: near task %lld of %u: %llu candidate pairs verified -> %s\n",
                 (long long)cmd.task, near, (unsigned long long)s.documents, s.dir.c_str());
  }
  return 0;
}

// `corpus tokenize`, in one process or as one task or the final phase of a job in tasks.
int RunCorpusTokenize(const CorpusCommand& cmd) {
  corpus::CorpusTokenizeOptions opt;
  opt.contract = cmd.contract;
  opt.threads = cmd.threads;
  opt.shard_tokens = cmd.shard_tokens;
  TRAIL_CHECK(cmd.task < 0 || cmd.tasks > 0,
              "--task belongs to a job in tasks: give --tasks N too");
  if (cmd.task >= 0) {
    TRAIL_CHECK(cmd.task < cmd.tasks, "--task ", cmd.task, " is not a task of --tasks ", cmd.tasks,
                ": tasks are numbered 0 to ", cmd.tasks - 1);
    const ingest::TokenizeTaskSummary s = corpus::TokenizeCorpusTask(
        cmd.out, opt, static_cast<uint32_t>(cmd.task), static_cast<uint32_t>(cmd.tasks));
    std::fprintf(stderr,
                 "corpus tokenize: encode task %lld of %lld %s: shards %u..%u (%.1f MB), "
                 "%llu documents, %llu tokens -> %s\n",
                 (long long)cmd.task, (long long)cmd.tasks,
                 s.already_complete ? "was already complete" : "done", s.first_file, s.end_file,
                 s.bytes / 1e6, (unsigned long long)s.documents, (unsigned long long)s.tokens,
                 s.dir.c_str());
    return 0;
  }
  const corpus::CorpusTokens t = cmd.tasks > 0 ? corpus::TokenizeCorpusFromTasks(
                                                     cmd.out, opt, static_cast<uint32_t>(cmd.tasks))
                                               : corpus::TokenizeCorpus(cmd.out, opt);
  std::printf("%s", t.report_json.c_str());
  std::fprintf(stderr, "  %-11s %-20s %10s %12s %10s %10s\n", "split", "source", "documents",
               "tokens", "doc share", "tok share");
  for (const corpus::TokenShare& r : t.shares) {
    std::fprintf(stderr, "  %-11s %-20s %10llu %12llu %10.4f %10.4f\n", r.split.c_str(),
                 r.source.c_str(), (unsigned long long)r.documents, (unsigned long long)r.tokens,
                 r.document_share, r.token_share);
  }
  std::fprintf(stderr, "token shards and <source>.shards.json lists in %s/tokens/<split>/\n",
               cmd.out.c_str());
  return 0;
}

}  // namespace

int RunCorpusCommand(const CorpusCommand& cmd) {
  if (*cmd.build) {
    corpus::BuildOptions opt;
    opt.threads = cmd.threads;
    opt.progress = !cmd.quiet;
    opt.memory_budget_bytes = static_cast<uint64_t>(cmd.memory_budget_mb) << 20;
    const std::string phase = !cmd.phase.empty() ? cmd.phase : cmd.task >= 0 ? "read" : "final";
    TRAIL_CHECK(cmd.tasks > 0 || (cmd.task < 0 && cmd.phase.empty() && cmd.near_tasks == 0),
                "--task, --phase and --near-tasks belong to a build in tasks: give --tasks N too");
    if (cmd.tasks > 0 && phase == "read") {
      TRAIL_CHECK(cmd.task >= 0, "the read phase runs one task: give --task I (0 .. ",
                  cmd.tasks - 1, ")");
      return RunReadTaskCommand(cmd, opt);
    }
    if (phase == "index" || phase == "near") return RunNearPhaseCommand(cmd, phase, opt);
    TRAIL_CHECK(cmd.task < 0,
                "--task belongs to the read and near phases; the final phase is one task");
    const corpus::CorpusConfig cfg = corpus::LoadCorpusConfig(cmd.config);
    const corpus::BuildSummary s =
        cmd.tasks > 0 ? corpus::BuildCorpusFromTasks(cfg, cmd.out, static_cast<uint32_t>(cmd.tasks),
                                                     opt, static_cast<uint32_t>(cmd.near_tasks))
                      : corpus::BuildCorpus(cfg, cmd.out, opt);
    std::printf("%s", s.report_json.c_str());
    PrintSummaryTable(s);
    std::fprintf(stderr,
                 "corpus: %llu documents in, %llu kept, %llu shards, %llu records "
                 "quarantined -> %s\n",
                 (unsigned long long)s.documents, (unsigned long long)s.kept,
                 (unsigned long long)s.shards, (unsigned long long)s.quarantined, cmd.out.c_str());
    return 0;
  }
  if (*cmd.tokenize) return RunCorpusTokenize(cmd);
  const std::string text = corpus::ExplainDocument(cmd.out + "/lineage.sqlite", cmd.key);
  if (text.empty()) {
    std::fprintf(stderr, "trail: no document '%s' in %s/lineage.sqlite\n", cmd.key.c_str(),
                 cmd.out.c_str());
    return 1;
  }
  std::printf("%s", text.c_str());
  return 0;
}

}  // namespace trail::cli
