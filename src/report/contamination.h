// A run's contamination audit (`trail data contamination`, docs/data.md §9.4): which items of
// evaluation sets share a token n-gram (13, as in GPT-3's decontamination) with the run's
// training documents, with the longest shared run, whether the whole item occurs, and at which
// steps the run read the shared tokens. Written to RUN/contamination.json; the run report shows
// its table.
//
// Items: an OLMES task folder (infer/olmes_tasks.h) gives one item per document, the text of its
// gold request with the longest context: the context after its last blank line (the few-shot
// examples before it are not the item) followed by the gold continuation (a document whose
// context is "Answer:" alone is one of OLMES's unconditional requests, not an item); a JSONL file
// gives one item per line
// ({"text": ..., "id": optional}), its task named by the file's stem. Texts are encoded with the
// run's tokenizer (ordinary encoding, no special tokens). Items shorter than n tokens cannot be
// checked by n-gram and are counted apart.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace trail::report {

struct ContaminationOptions {
  std::string run_dir;
  std::string manifest;            // "" : the one run.json names
  std::string tokenizer;           // "" : the run's tokenizer contract
  std::vector<std::string> tasks;  // OLMES task folders, or folders holding them
  std::vector<std::string> items;  // JSONL files of {"text", "id"}
  uint32_t ngram = 13;
  size_t max_hits_listed = 8;  // per item (all are counted)
};

struct ContaminationHit {
  std::string source, key;
  uint64_t shard = 0, doc = 0;
  uint64_t doc_begin = 0, doc_end = 0;    // the shared run in the document
  uint64_t item_begin = 0, item_end = 0;  // and in the item
  uint64_t steps_read = 0, loss_tokens = 0;
  std::vector<int64_t> steps;  // the distinct steps that read it, ascending
};

struct ContaminatedItem {
  std::string id, text;
  uint64_t tokens = 0, longest = 0, hits = 0;
  bool whole = false;    // the whole item occurs in a training document
  bool trained = false;  // a step read some shared token
  std::vector<ContaminationHit> listed;
};

struct TaskContamination {
  std::string task;
  uint64_t items = 0, short_items = 0, contaminated = 0, whole = 0, trained = 0;
  std::vector<ContaminatedItem> contaminated_items;
};

struct ContaminationReport {
  uint32_t ngram = 13;
  int64_t steps = 0;
  uint64_t training_documents = 0;
  double seconds = 0;
  std::vector<TaskContamination> tasks;
};

ContaminationReport AuditContamination(const ContaminationOptions& o);

// "trail.contamination.v1": ngram, steps, training_documents, seconds, tasks (task, items,
// short_items, contaminated, whole, trained, contaminated_items: id, text, tokens, longest,
// hits, whole, trained, listed: source, shard, doc, key, doc_tokens, item_tokens, steps_read,
// loss_tokens, steps).
nlohmann::ordered_json ContaminationToJson(const ContaminationReport& r);
// The per-task summary back from that JSON (contaminated_items left empty); throws naming
// `where` when it is not one.
ContaminationReport ParseContaminationSummary(const std::string& text, const std::string& where);

// The report's section: RUN/contamination.json as a table, or a note that there is none.
std::string ContaminationSection(const std::string& run_dir);

}  // namespace trail::report
