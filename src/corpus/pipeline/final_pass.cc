#include "corpus/pipeline/final_pass.h"

#include <chrono>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/file_util.h"
#include "core/spill.h"
#include "core/timing.h"
#include "corpus/filters/decontam.h"
#include "corpus/pipeline/doc_runs.h"
#include "corpus/filters/pii.h"
#include "corpus/pipeline/progress.h"

namespace trail::corpus {
namespace {
using Clock = std::chrono::steady_clock;
using Json = nlohmann::ordered_json;

// Every line of every evaluation file is one item, named by file and line number.
std::unique_ptr<ContaminationIndex> LoadContaminationIndex(const CorpusConfig& cfg) {
  if (cfg.eval_files.empty()) return nullptr;
  std::vector<EvalItem> items;
  for (const std::string& f : cfg.eval_files) {
    std::istringstream in(ReadFileToString(f));
    std::string line;
    for (int n = 0; std::getline(in, line); ++n) {
      items.push_back({std::filesystem::path(f).filename().string(), std::to_string(n), line});
    }
  }
  return std::make_unique<ContaminationIndex>(items, cfg.decontam_ngram);
}

// A document in the final pass, with the verdicts its lineage row records.
struct FinalDoc {
  DocRecord d;
  std::string exact_survivor, cluster, contaminated_by;
  std::string line;         // the shard line of a document still kept after cleaning
  uint64_t text_bytes = 0;  // of the cleaned text (the line holds it; the text is freed)
  ShardPlace place;
  PiiCounts pii;
  Split split = Split::kTrain;
};

class FinalPass {
 public:
  FinalPass(const CorpusConfig& cfg, const std::vector<std::string>& files, ThreadPool& pool,
            LineageWriter& lineage, ShardGroups& shards, BuildSummary& sum, BuildReport& report)
      : cfg_(cfg),
        files_(files),
        pool_(pool),
        lineage_(lineage),
        shards_(shards),
        sum_(sum),
        report_(report),
        contam_(LoadContaminationIndex(cfg)),
        kept_per_source_(cfg.sources.size(), 0) {
    decontam_.cut = cfg.decontam_cut;
  }

  void Add(FinalDoc&& f, uint64_t batch_budget) {
    batch_bytes_ += f.d.text.size() + sizeof(FinalDoc);
    batch_.push_back(std::move(f));
    if (batch_bytes_ >= batch_budget) Flush();
  }

  void Flush() {
    auto t = Clock::now();
    pool_.ParallelFor(batch_.size(), [&](size_t i) { Clean(batch_[i]); });
    report_.seconds["pii_decontamination"] += SecondsSince(t);
    t = Clock::now();
    for (FinalDoc& f : batch_) Place(f);
    shard_seconds_ += SecondsSince(t);
    t = Clock::now();
    for (const FinalDoc& f : batch_) lineage_.AddDocument(Row(f));
    report_.lineage_seconds += SecondsSince(t);
    batch_.clear();
    batch_bytes_ = 0;
  }

  double shard_seconds() const { return shard_seconds_; }

 private:
  // PII redaction, then decontamination (drop, or cut the contaminated spans out), then the
  // shard line (JSON) of a document still kept: on the workers, not in the ordered pass.
  void Clean(FinalDoc& f) const {
    if (f.d.drop.dropped()) return;
    if (cfg_.pii) {
      PiiResult p = RedactPii(f.d.text);
      f.pii = p.counts;
      f.d.text = std::move(p.text);
    }
    if (contam_) {
      DecontamOutcome o = Decontaminate(f.d.text, *contam_, decontam_);
      if (!o.hits.empty()) f.contaminated_by = std::to_string(o.hits.size()) + " n-gram hits";
      if (o.dropped) {
        f.d.drop = Drop(DropReason::kContaminated);
      } else {
        f.d.text = std::move(o.text);
      }
    }
    if (f.d.drop.dropped()) return;
    const DocRecord& d = f.d;
    f.line = Json{{"id", d.key},
                  {"text", d.text},
                  {"source", cfg_.sources[d.source_index].name},
                  {"metadata", Json{{"language", d.lang.language}, {"cluster", f.cluster}}}}
                 .dump() +
             "\n";
    f.text_bytes = d.text.size();
    std::string().swap(f.d.text);
  }

  // Split by cluster, then the source's quota, then the document's shard line.
  void Place(FinalDoc& f) {
    DocRecord& d = f.d;
    if (d.drop.reason() == DropReason::kContaminated) {
      ++report_.dropped["pii_decontamination"][d.drop.text()];
    }
    if (!f.cluster.empty())
      f.split = SplitOfCluster(f.cluster, cfg_.seed, cfg_.train, cfg_.validation);
    if (d.drop.dropped()) return;
    const uint64_t quota = cfg_.sources[d.source_index].quota;
    if (quota > 0 && kept_per_source_[d.source_index] >= quota) {
      d.drop = Drop(DropReason::kQuota);
      ++report_.dropped["split_quota"][d.drop.text()];
      return;
    }
    ++kept_per_source_[d.source_index];
    f.place = shards_.Append(f.split, d.source_index, f.line);
    std::string().swap(f.line);
    sum_.bytes_out += f.text_bytes;
    ++sum_.kept;
  }

  LineageRow Row(const FinalDoc& f) const {
    const DocRecord& d = f.d;
    LineageRow r;
    r.key = d.key;
    r.source = cfg_.sources[d.source_index].name;
    r.file = files_[d.file_index];
    r.offset = d.offset;
    r.bytes = d.raw_bytes;
    r.encoding = d.norm.encoding;
    r.encoding_detected = d.norm.detected;
    r.replaced = d.norm.replaced;
    r.controls_removed = d.norm.controls_removed;
    r.content_hash = d.content_hash;
    r.language = d.lang.language;
    r.language_score = d.lang.score;
    r.exact_survivor = f.exact_survivor;
    r.cluster = f.cluster;
    r.pii_email = f.pii.email, r.pii_phone = f.pii.phone, r.pii_ip = f.pii.ip;
    r.pii_secret = f.pii.secret;
    r.contamination = f.contaminated_by;
    r.split = f.cluster.empty() ? "" : SplitName(f.split);
    r.kept = !d.drop.dropped();
    r.drop_reason = d.drop.text();
    r.shard = f.place.shard;
    r.shard_line = f.place.line;
    r.rules = d.rules_json;
    return r;
  }

  const CorpusConfig& cfg_;
  const std::vector<std::string>& files_;
  ThreadPool& pool_;
  LineageWriter& lineage_;
  ShardGroups& shards_;
  BuildSummary& sum_;
  BuildReport& report_;
  std::unique_ptr<ContaminationIndex> contam_;
  DecontamConfig decontam_;
  std::vector<uint64_t> kept_per_source_;
  std::vector<FinalDoc> batch_;
  uint64_t batch_bytes_ = 0;
  double shard_seconds_ = 0;
};

}  // namespace

void RunFinalPass(const CorpusConfig& cfg, const Budget& budget,
                  const std::vector<std::string>& files, const FinalPassInput& in, ThreadPool& pool,
                  bool show_progress, LineageWriter& lineage, ShardGroups& shards,
                  BuildSummary& sum, BuildReport& report) {
  FinalPass pass(cfg, files, pool, lineage, shards, sum, report);
  // The keys needed before they are reached are those of cluster roots and exact survivors:
  // both smaller than every document that refers to them.
  std::unordered_map<uint32_t, std::string> key_of;
  for (const auto& [x, root] : in.root_of) key_of[root];
  for (uint32_t e : in.exact_survivors) key_of[e];
  SpillReader exact(in.exact_dups, 1 << 16);
  ExactDup next_dup{UINT32_MAX, 0};
  if (!exact.Read(&next_dup, sizeof next_dup)) next_dup.ord = UINT32_MAX;
  StageProgress progress("pii/decontamination/shards", in.documents, in.bytes_in, show_progress);
  DocRunMerge merge(in.runs, in.run_buffer);
  uint32_t ord = 0;
  for (DocRunMerge::Item it; merge.Next(it);) {
    if (it.repeated) continue;
    FinalDoc f;
    f.d = std::move(it.doc);
    const bool dup = next_dup.ord == ord;
    const uint32_t survivor = dup ? next_dup.survivor : ord;
    if (dup && !exact.Read(&next_dup, sizeof next_dup)) next_dup.ord = UINT32_MAX;
    if (const auto k = key_of.find(ord); k != key_of.end()) k->second = f.d.key;
    if (!f.d.drop.dropped()) {
      const auto r = in.root_of.find(survivor);
      const uint32_t root = r == in.root_of.end() ? survivor : r->second;
      f.exact_survivor = dup ? key_of.at(survivor) : f.d.key;
      f.cluster = root == ord ? f.d.key : key_of.at(root);
      if (dup) {
        f.d.drop = Drop(DropReason::kExactDup);
        ++report.dropped["exact_dedup"][f.d.drop.text()];
      } else if (root != ord) {
        f.d.drop = Drop(DropReason::kNearDup);
        ++report.dropped["near_dedup"][f.d.drop.text()];
      }
      if (f.d.drop.dropped()) std::string().swap(f.d.text);
    }
    pass.Add(std::move(f), budget.batch());
    ++ord;
    progress.Tick();
  }
  pass.Flush();
  progress.Finish();
  report.seconds["shards"] += pass.shard_seconds();
}

}  // namespace trail::corpus
