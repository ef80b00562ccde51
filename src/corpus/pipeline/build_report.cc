#include "corpus/pipeline/build_report.h"

#include <nlohmann/json.hpp>

#include "core/file_util.h"
#include "corpus/pipeline/memory_watch.h"

namespace trail::corpus {
namespace {
using Json = nlohmann::ordered_json;

Json StageTable(const std::vector<StageCount>& stages) {
  Json st = Json::array();
  for (const StageCount& c : stages) {
    Json drops = Json::object();
    for (const auto& [reason, n] : c.dropped) drops[reason] = n;
    st.push_back(Json{{"stage", c.stage},
                      {"in", c.in},
                      {"out", c.out},
                      {"dropped", drops},
                      {"seconds", c.seconds}});
  }
  return st;
}

}  // namespace

std::vector<StageCount> BuildReport::Stages(uint64_t documents) const {
  auto count = [&](const std::string& stage, const std::string& reason) -> uint64_t {
    const auto s = dropped.find(stage);
    if (s == dropped.end()) return 0;
    const auto c = s->second.find(reason);
    return c == s->second.end() ? 0 : c->second;
  };
  uint64_t live = documents + reader_quarantined + count("read", "quarantine.duplicate_id");
  std::vector<StageCount> out;
  for (const char* name : kReportStages) {
    StageCount c{name, live, live, {}, 0.0};
    if (const auto s = dropped.find(name); s != dropped.end()) {
      for (const auto& [reason, n] : s->second) c.dropped[reason] = n, c.out -= n;
    }
    if (const auto sec = seconds.find(name); sec != seconds.end()) c.seconds = sec->second;
    live = c.out;
    out.push_back(std::move(c));
  }
  return out;
}

BuildMemory BuildReport::Memory() const {
  return {budget_bytes, static_cast<uint64_t>(MemoryWatch::PeakRssBytes()), peak_anon_bytes,
          document_runs, spilled_sort_bytes};
}

std::string BuildReport::ToJson(const BuildSummary& sum) const {
  Json rep;
  rep["format"] = "trail.corpus-report.v1";
  rep["documents"] = sum.documents;
  rep["kept"] = sum.kept;
  rep["bytes_in"] = sum.bytes_in;
  rep["bytes_out"] = sum.bytes_out;
  rep["shards"] = sum.shards;
  Json reasons = Json::object();
  for (const Quarantined& q : quarantined) reasons[q.reason] = reasons.value(q.reason, 0) + 1;
  rep["quarantined"] = quarantined.size();
  rep["quarantine_reasons"] = reasons;
  rep["warc_records_skipped"] = warc_skipped;
  if (resumed_runs > 0) {
    rep["resumed"] = "per-document stages (normalize, language, quality) restored for " +
                     std::to_string(resumed_runs) + " of " + std::to_string(document_runs) +
                     " document runs from .work/";
  }
  if (read_tasks > 0) rep["read_tasks"] = read_tasks;
  rep["checkpoint_seconds"] = checkpoint_seconds;
  rep["stages"] = StageTable(sum.stages);
  rep["lineage_seconds"] = lineage_seconds;
  rep["near_dedup"] =
      Json{{"candidate_pairs", candidate_pairs}, {"verified_pairs", verified_pairs}};
  rep["memory"] = Json{{"budget_bytes", sum.memory.budget_bytes},
                       {"peak_rss_bytes", sum.memory.peak_rss_bytes},
                       {"peak_anon_bytes", sum.memory.peak_anon_bytes},
                       {"document_runs", sum.memory.document_runs},
                       {"spilled_sort_bytes", sum.memory.spilled_sort_bytes}};
  return rep.dump(2) + "\n";
}

void WriteQuarantineFile(const std::vector<Quarantined>& bad, const std::string& path) {
  if (bad.empty()) return;
  std::string lines;
  for (const Quarantined& q : bad) {
    lines +=
        Json{{"file", q.file},     {"offset", q.offset}, {"line", q.line},     {"bytes", q.bytes},
             {"reason", q.reason}, {"detail", q.detail}, {"sample", q.sample}, {"sha256", q.sha256}}
            .dump(-1, ' ', false, Json::error_handler_t::replace) +
        "\n";
  }
  WriteFileAtomic(path, lines);
}

}  // namespace trail::corpus
