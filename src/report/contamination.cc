#include "report/contamination.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "core/error.h"
#include "core/file_util.h"
#include "data/find.h"
#include "data/find_index.h"
#include "data/ngram_scan.h"
#include "infer/olmes_tasks.h"
#include "infer/trained_model.h"
#include "report/svg_chart.h"
#include "train/run_dir.h"

namespace trail::report {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

struct Item {
  size_t task;
  std::string id, text;
  std::vector<uint32_t> tokens;
};

// An OLMES document's item: the gold request's context after its last blank line (the few-shot
// examples come before it), then the gold continuation.
std::string OlmesItemText(const infer::EvalRequest& gold) {
  const size_t cut = gold.context.rfind("\n\n");
  return (cut == std::string::npos ? gold.context : gold.context.substr(cut + 2)) +
         gold.continuation;
}

// One item per document: its gold request with the longest context. OLMES's unconditional
// requests (doc_id + 1 000 000, context "Answer:" alone) are no item of their own.
void AddOlmesItems(const std::string& dir, std::vector<TaskContamination>& tasks,
                   std::vector<Item>& items) {
  const infer::EvalTask t = infer::LoadTask(dir, 0);
  tasks.emplace_back().task = t.name;
  std::map<int64_t, const infer::EvalRequest*> gold;
  for (const infer::EvalRequest& r : t.requests) {
    const infer::EvalRequest*& g = gold[r.doc_id];
    if (r.idx == r.label && (g == nullptr || r.context.size() > g->context.size())) g = &r;
  }
  for (const auto& [doc, r] : gold) {
    if (r == nullptr || r->context == "Answer:") continue;
    items.push_back({tasks.size() - 1, std::to_string(doc), OlmesItemText(*r), {}});
  }
}

void AddJsonlItems(const std::string& path, std::vector<TaskContamination>& tasks,
                   std::vector<Item>& items) {
  tasks.emplace_back().task = fs::path(path).stem().string();
  for (data::TextItem& t : data::ReadTextJsonl(path)) {
    items.push_back({tasks.size() - 1, t.id, std::move(t.text), {}});
  }
}

// One shared run as the report lists it, with the steps that read it.
ContaminationHit DescribeHit(data::CanonicalStream& stream, const data::DocumentNumbers& numbers,
                             const data::NgramHit& h, int64_t steps) {
  const data::DocumentRef ref = numbers.Ref(h.number);
  const data::SourceStream& src = stream.source(ref.source);
  ContaminationHit c;
  c.source = src.name();
  c.key = std::string(src.shard(ref.shard).doc_key(ref.doc));
  c.shard = ref.shard, c.doc = ref.doc;
  c.doc_begin = h.doc_tokens.begin, c.doc_end = h.doc_tokens.end;
  c.item_begin = h.query_begin;
  c.item_end = h.query_begin + (h.doc_tokens.end - h.doc_tokens.begin);
  std::set<int64_t> read;
  for (const data::Reading& x : data::ReadDocument(stream, ref, h.doc_tokens, steps)) {
    read.insert(x.step);
    c.loss_tokens += x.targets;
  }
  c.steps.assign(read.begin(), read.end());
  c.steps_read = c.steps.size();
  return c;
}

void Summarize(const std::vector<Item>& items, const std::vector<data::NgramHit>& hits,
               data::CanonicalStream& stream, int64_t steps, const ContaminationOptions& o,
               ContaminationReport& r) {
  const data::DocumentNumbers numbers(stream);
  for (size_t i = 0, h = 0; i < items.size(); ++i) {
    TaskContamination& t = r.tasks[items[i].task];
    ++t.items;
    if (items[i].tokens.size() < o.ngram) ++t.short_items;
    if (h >= hits.size() || hits[h].query != i) continue;
    ContaminatedItem c;
    c.id = items[i].id, c.text = items[i].text, c.tokens = items[i].tokens.size();
    for (; h < hits.size() && hits[h].query == i; ++h) {
      const uint64_t len = hits[h].doc_tokens.end - hits[h].doc_tokens.begin;
      c.longest = std::max(c.longest, len);
      c.whole |= len == c.tokens;
      ++c.hits;
      ContaminationHit d = DescribeHit(stream, numbers, hits[h], steps);
      c.trained |= d.steps_read > 0;
      if (c.listed.size() < o.max_hits_listed) c.listed.push_back(std::move(d));
    }
    ++t.contaminated;
    t.whole += c.whole ? 1 : 0;
    t.trained += c.trained ? 1 : 0;
    t.contaminated_items.push_back(std::move(c));
  }
}

}  // namespace

ContaminationReport AuditContamination(const ContaminationOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  TRAIL_CHECK(!o.tasks.empty() || !o.items.empty(),
              "contamination: give evaluation sets (--tasks DIR or --items FILE.jsonl)");
  TRAIL_CHECK(o.ngram >= 1, "contamination: the n-gram length must be at least 1");
  const train::RunDirectory run(o.run_dir);
  const train::RunInfo info = run.ReadInfo();
  const std::string manifest = o.manifest.empty() ? info.data_manifest : o.manifest;
  TRAIL_CHECK(!manifest.empty() && fs::exists(manifest), o.run_dir,
              ": the data manifest run.json names (", info.data_manifest,
              ") is not here; pass --manifest with a copy of it");
  ContaminationReport r;
  r.ngram = o.ngram;
  r.steps = static_cast<int64_t>(run.ReadTrajectory(info.genesis, false).size());
  std::vector<Item> items;
  if (!o.tasks.empty()) {
    for (const std::string& dir : infer::FindTaskDirs(o.tasks)) AddOlmesItems(dir, r.tasks, items);
  }
  for (const std::string& f : o.items) AddJsonlItems(f, r.tasks, items);
  std::string contract_path;
  const tok::LoadedContract lc =
      infer::FindRunTokenizer(o.tokenizer, o.run_dir, manifest, contract_path);
  std::vector<std::vector<uint32_t>> queries;
  for (Item& it : items) {
    lc.tokenizer->EncodeOrdinary(it.text, it.tokens);
    queries.push_back(it.tokens);
  }
  data::CanonicalStream stream(data::LoadManifest(manifest), data::StreamOptions{false});
  r.training_documents = data::DocumentNumbers(stream).size();
  Summarize(items, data::ScanForNgrams(stream, queries, o.ngram), stream, r.steps, o, r);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

Json ContaminationToJson(const ContaminationReport& r) {
  Json tasks = Json::array();
  for (const TaskContamination& t : r.tasks) {
    Json items = Json::array();
    for (const ContaminatedItem& c : t.contaminated_items) {
      Json listed = Json::array();
      for (const ContaminationHit& h : c.listed) {
        listed.push_back({{"source", h.source},
                          {"shard", h.shard},
                          {"doc", h.doc},
                          {"key", h.key},
                          {"doc_tokens", {h.doc_begin, h.doc_end}},
                          {"item_tokens", {h.item_begin, h.item_end}},
                          {"steps_read", h.steps_read},
                          {"loss_tokens", h.loss_tokens},
                          {"steps", h.steps}});
      }
      items.push_back({{"id", c.id},
                       {"text", c.text},
                       {"tokens", c.tokens},
                       {"longest", c.longest},
                       {"hits", c.hits},
                       {"whole", c.whole},
                       {"trained", c.trained},
                       {"listed", std::move(listed)}});
    }
    tasks.push_back({{"task", t.task},
                     {"items", t.items},
                     {"short_items", t.short_items},
                     {"contaminated", t.contaminated},
                     {"whole", t.whole},
                     {"trained", t.trained},
                     {"contaminated_items", std::move(items)}});
  }
  return {{"format", "trail.contamination.v1"},
          {"ngram", r.ngram},
          {"steps", r.steps},
          {"training_documents", r.training_documents},
          {"seconds", r.seconds},
          {"tasks", std::move(tasks)}};
}

ContaminationReport ParseContaminationSummary(const std::string& text, const std::string& where) {
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    TRAIL_CHECK(j.at("format") == "trail.contamination.v1", where, ": not a contamination report");
    ContaminationReport r;
    r.ngram = j.at("ngram").get<uint32_t>();
    r.steps = j.at("steps").get<int64_t>();
    r.training_documents = j.at("training_documents").get<uint64_t>();
    for (const auto& t : j.at("tasks")) {
      TaskContamination& x = r.tasks.emplace_back();
      x.task = t.at("task").get<std::string>();
      x.items = t.at("items").get<uint64_t>();
      x.short_items = t.at("short_items").get<uint64_t>();
      x.contaminated = t.at("contaminated").get<uint64_t>();
      x.whole = t.at("whole").get<uint64_t>();
      x.trained = t.at("trained").get<uint64_t>();
    }
    return r;
  } catch (const nlohmann::json::exception& e) {
    TRAIL_FAIL(where, ": not a contamination report (", e.what(), ")");
  }
}

std::string ContaminationSection(const std::string& run_dir) {
  std::string s = "<section id=\"contamination\"><h2>Contamination of evaluation sets</h2>";
  const std::string path = run_dir + "/contamination.json";
  if (!fs::exists(path)) {
    return s +
           "<p>No contamination audit (trail data contamination --run RUN --tasks DIR).</p>"
           "</section>";
  }
  const ContaminationReport r = ParseContaminationSummary(ReadFileToString(path), path);
  s += "<p>Items sharing a " + std::to_string(r.ngram) + "-token n-gram with the " +
       std::to_string(r.training_documents) + " training documents; trained: read by one of the " +
       std::to_string(r.steps) + " steps.</p>";
  s += "<table><tr><th>task</th><th>items</th><th>too short</th><th>contaminated</th>"
       "<th>whole item</th><th>trained on</th></tr>";
  for (const TaskContamination& t : r.tasks) {
    s += "<tr><td>" + EscapeHtml(t.task) + "</td>";
    for (uint64_t v : {t.items, t.short_items, t.contaminated, t.whole, t.trained}) {
      s += "<td class=\"num\">" + std::to_string(v) + "</td>";
    }
    s += "</tr>";
  }
  return s + "</table></section>";
}

}  // namespace trail::report
