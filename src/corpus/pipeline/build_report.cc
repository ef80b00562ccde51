#include "corpus/pipeline/build_report.h"

#include <nlohmann/json.hpp>

#include "core/file_util.h"
#include "corpus/pipeline/memory_watch.h"

namespace trail::corpus {
namespace {
using Json = nlohmann::ordered_json;

// Documents in, out and dropped per stage: every input document (read, repeated key or
// quarantined by the reader) enters "read"; each stage passes on what it did not drop.
Json StageTable(const BuildReport& r, uint64_t documents) {
  auto count = [&](const std::string& stage, const std::string& reason) -> uint64_t {
    const auto s = r.dropped.find(stage);
    if (s == r.dropped.end()) return 0;
    const auto c = s->second.find(reason);
    return c == s->second.end() ? 0 : c->second;
  };
  uint64_t live = documents + r.reader_quarantined + count("read", "quarantine.duplicate_id");
  Json st = Json::array();
  for (const char* name : kReportStages) {
    uint64_t n = 0;
    Json drops = Json::object();
    if (const auto s = r.dropped.find(name); s != r.dropped.end()) {
      for (const auto& [reason, c] : s->second) {
        drops[reason] = c;
        n += c;
      }
    }
    const auto sec = r.seconds.find(name);
    st.push_back(Json{{"stage", name},
                      {"in", live},
                      {"out", live - n},
                      {"dropped", drops},
                      {"seconds", sec == r.seconds.end() ? 0.0 : sec->second}});
    live -= n;
  }
  return st;
}

}  // namespace

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
  rep["stages"] = StageTable(*this, sum.documents);
  rep["lineage_seconds"] = lineage_seconds;
  rep["near_dedup"] =
      Json{{"candidate_pairs", candidate_pairs}, {"verified_pairs", verified_pairs}};
  rep["memory"] = Json{{"budget_bytes", budget_bytes},
                       {"peak_rss_bytes", MemoryWatch::PeakRssBytes()},
                       {"peak_anon_bytes", peak_anon_bytes},
                       {"document_runs", document_runs},
                       {"spilled_sort_bytes", spilled_sort_bytes}};
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
