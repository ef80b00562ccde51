#include "corpus/pipeline/read_phase.h"

#include <malloc.h>

#include <chrono>
#include <filesystem>
#include <memory>

#include "core/timing.h"
#include "corpus/pipeline/build_work.h"
#include "corpus/pipeline/doc_stages.h"
#include "corpus/pipeline/progress.h"
#include "corpus/read/source_reader.h"

namespace trail::corpus {
namespace {
using Clock = std::chrono::steady_clock;

// Collects documents into chunks and turns each full chunk into a document run.
class ChunkWriter {
 public:
  ChunkWriter(const Budget& budget, const std::string& work, const std::string& fingerprint,
              const std::vector<std::unique_ptr<DocStage>>& stages, ThreadPool& pool,
              BuildReport& report)
      : budget_(budget),
        work_(work),
        fingerprint_(fingerprint),
        stages_(stages),
        pool_(pool),
        report_(report) {}

  // Adds a document; true when that filled the chunk and it was written.
  bool Add(RawDoc&& r, uint32_t source_index) {
    PendingDoc p;
    p.rec.key = std::move(r.key);
    p.rec.source_index = source_index;
    p.rec.file_index = r.file_index;
    p.rec.offset = r.offset;
    bytes_ += r.raw.size() + p.rec.key.size() + sizeof(PendingDoc);
    p.raw = std::move(r.raw);
    p.html = r.html;
    // A chunk holds at most chunk() / sizeof(PendingDoc) documents (each counts that much):
    // room for them up front, so the vector never moves its documents while it grows.
    if (chunk_.empty()) chunk_.reserve(budget_.chunk() / sizeof(PendingDoc) + 1);
    chunk_.push_back(std::move(p));
    if (bytes_ < budget_.chunk()) return false;
    Flush();
    return true;
  }

  void Flush() {
    if (chunk_.empty()) return;
    const size_t c = runs_.size();
    runs_.push_back(DocRunPath(work_, c));
    if (DocRunIsValid(runs_.back(), fingerprint_, c, chunk_.size())) {
      ++report_.resumed_runs;
    } else {
      RunDocStages(stages_, chunk_, pool_, report_.seconds);
      const auto t = Clock::now();
      WriteDocRun(chunk_, runs_.back(), fingerprint_, c, budget_.write_buffer());
      report_.checkpoint_seconds += SecondsSince(t);
    }
    chunk_.clear();
    chunk_.shrink_to_fit();
    bytes_ = 0;
    // A chunk frees many small allocations across the workers' malloc arenas; hand the free
    // pages back so the next chunk's do not add to them.
    malloc_trim(0);
  }

  std::vector<std::string> TakeRuns() { return std::move(runs_); }

 private:
  const Budget& budget_;
  const std::string& work_;
  const std::string& fingerprint_;
  const std::vector<std::unique_ptr<DocStage>>& stages_;
  ThreadPool& pool_;
  BuildReport& report_;
  std::vector<PendingDoc> chunk_;
  uint64_t bytes_ = 0;
  std::vector<std::string> runs_;
};

}  // namespace

std::vector<std::string> BuildFileList(const CorpusConfig& cfg) {
  std::vector<std::string> files;
  for (const SourceConfig& s : cfg.sources)
    files.insert(files.end(), s.paths.begin(), s.paths.end());
  return files;
}

std::vector<std::string> ReadIntoDocRuns(const CorpusConfig& cfg, const Budget& budget,
                                         const std::string& work, const std::string& fingerprint,
                                         ThreadPool& pool, bool show_progress, BuildReport& report,
                                         FileRange range) {
  const auto start = Clock::now();
  uint64_t input_bytes = 0;
  const std::vector<std::string> files = BuildFileList(cfg);
  for (uint32_t f = 0; f < files.size(); ++f) {
    if (range.contains(f)) input_bytes += std::filesystem::file_size(files[f]);
  }
  std::unique_ptr<LanguageIdentifier> lid;
  if (cfg.language) lid = std::make_unique<LanguageIdentifier>(cfg.language_model);
  const std::vector<std::unique_ptr<DocStage>> stages = PerDocumentStages(cfg, lid.get());
  ChunkWriter chunks(budget, work, fingerprint, stages, pool, report);
  ByteProgress progress("read+per-document", input_bytes, show_progress);
  uint64_t files_done = 0;
  uint32_t first_file = 0;
  for (size_t i = 0; i < cfg.sources.size(); ++i) {
    ReadSource(
        cfg, i, first_file, range,
        [&](RawDoc&& r) {
          const uint64_t offset = r.offset;
          if (chunks.Add(std::move(r), static_cast<uint32_t>(i)))
            progress.Update(files_done + offset);
        },
        [&](Quarantined&& q) { report.quarantined.push_back(std::move(q)); }, report.warc_skipped,
        [&](uint64_t bytes) {
          files_done += bytes;
          progress.Update(files_done);
        });
    first_file += static_cast<uint32_t>(cfg.sources[i].paths.size());
  }
  chunks.Flush();
  progress.Finish();
  std::vector<std::string> runs = chunks.TakeRuns();
  report.document_runs = runs.size();
  double stage_seconds = 0;
  for (const auto& stage : stages) {
    // HTML extraction on the workers is part of the read stage: its time stays in "read".
    if (std::string_view(stage->name()) != "read") stage_seconds += report.seconds[stage->name()];
  }
  report.seconds["read"] = SecondsSince(start) - stage_seconds - report.checkpoint_seconds;
  for (const Quarantined& q : report.quarantined)
    ++report.dropped["read"]["quarantine." + q.reason];
  report.reader_quarantined = report.quarantined.size();
  return runs;
}

}  // namespace trail::corpus
