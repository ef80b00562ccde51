// Where a token sequence occurs in a manifest's training documents, and when a run trained on
// it (docs/data.md §9), answered from the find index (data/find_index.h) and the shards.
//   - Same documents: training documents whose tokens equal the query's (the content hash).
//   - Shared runs: every maximal run of at least `min_tokens` tokens that the query and a
//     training document share (found from the winnowed grams they share, checked token by token
//     and extended both ways); a run that is the whole query is an exact occurrence of it, a
//     shorter one a partial overlap (an excerpt, an edited copy). Runs shorter than the index's
//     guaranteed_tokens() may be missed; the result says the bound.
//   - Readings: for each run, every window and step of steps [0, steps) that read its tokens
//     (data/readings.h), loss-bearing and context only counted apart.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "data/find_index.h"
#include "data/readings.h"

namespace trail::data {

struct FindOptions {
  uint64_t min_tokens = 50;          // the shortest shared run reported
  int64_t steps = 0;                 // readings by the steps [0, steps) (0: no readings)
  size_t max_hits_per_gram = 10000;  // a gram in more documents than this is boilerplate
};

struct SharedRun {
  uint64_t number = 0;  // the document's global number (data/find_index.h)
  DocumentRef ref;
  std::string source, key;   // the source's name, the document's lineage key
  TokenRange doc_tokens;     // the run in the document
  uint64_t query_begin = 0;  // where it starts in the query
  uint64_t doc_length = 0;
  bool whole_query = false;     // the query occurs in the document exactly
  bool whole_document = false;  // the run is the whole document
  std::vector<Reading> readings;
  uint64_t steps_read = 0;            // distinct steps among the readings
  uint64_t targets = 0, context = 0;  // document tokens read as loss-bearing targets, as context
};

struct FindResult {
  uint64_t query_tokens = 0;
  uint64_t training_tokens = 0;    // of every training document: a longer query cannot occur whole
  uint64_t guaranteed_tokens = 0;  // runs at least this long are never missed
  uint64_t min_tokens = 0;         // as used
  std::vector<uint64_t> same_documents;  // numbers of documents equal to the query
  std::vector<SharedRun> runs;           // longest first, then by document and offset
  uint64_t grams_looked_up = 0, candidates = 0;
  bool truncated = false;  // a gram's hits were capped at max_hits_per_gram
};

FindResult FindTokens(CanonicalStream& stream, const FindIndex& index,
                      const std::vector<uint32_t>& query, const FindOptions& opt);

// The result as JSON ("trail.data-find.v1", docs/data.md §9.2): query_tokens, training_tokens,
// guaranteed_tokens,
// min_tokens, same_documents (source, shard, doc, key), runs (source, shard, doc, key,
// doc_tokens [b, e), query_tokens [b, e), doc_length, whole_query, whole_document, steps_read,
// loss_tokens, context_tokens, readings: step, window, pass, chunk, doc_tokens, window_offset,
// loss_tokens, context_tokens), grams_looked_up, candidates, truncated.
nlohmann::ordered_json FindResultToJson(CanonicalStream& stream, const FindResult& r);
nlohmann::ordered_json SharedRunToJson(const SharedRun& r);
// One reading as in "readings" above, and back (throws trail::Error naming `where` and the field
// when a value is missing or of the wrong type).
nlohmann::ordered_json ReadingToJson(const Reading& x);
Reading ReadingFromJson(const nlohmann::json& j, const std::string& where);

// The texts of a JSONL file, one per non-blank line {"text": ..., "id": optional}: `where` is
// FILE:LINE, `id` the "id" (a string, or another JSON value as written) or else the line number.
// Throws naming FILE:LINE for a line that is not an object with a string "text", and the file
// when it cannot be read or holds none.
struct TextItem {
  std::string where, id, text;
};
std::vector<TextItem> ReadTextJsonl(const std::string& path);

// The document with lineage key `key` among the training documents, as a shared run covering
// the whole document (with its readings); throws naming the key when no training document has it.
SharedRun FindKey(CanonicalStream& stream, const std::string& key, int64_t steps);
// The same, or nullopt when no training document has the key.
std::optional<SharedRun> FindKeyIfTrained(CanonicalStream& stream, const std::string& key,
                                          int64_t steps);

// What a corpus build did with a document of exactly a query's normalized text (a verdict of
// its lineage database: corpus/pipeline/pipeline.h, LineageByContent) and, for a dropped
// duplicate, how many steps read its survivor.
struct BuildVerdict {
  std::string key, source, split;
  bool kept = false;
  std::string dropped;   // the drop reason ("" when kept)
  std::string survivor;  // exact_dup: the survivor; near_dup: the cluster's survivor ("": none)
  // Distinct steps of [0, steps) that read the survivor; nullopt when it is no training document
  // (or there is no survivor). Set by AddSurvivorReadings.
  std::optional<uint64_t> survivor_steps_read;
};
void AddSurvivorReadings(CanonicalStream& stream, std::vector<BuildVerdict>& verdicts,
                         int64_t steps);
// One entry of trail.data-find.v1's "lineage": key, source, kept, split, dropped, survivor and,
// where there is a survivor, survivor_steps_read (null when the survivor is no training document).
nlohmann::ordered_json BuildVerdictToJson(const BuildVerdict& v);

}  // namespace trail::data
