// The effective-data view of a built corpus (docs/plan.md, "Effective data"): per source, what
// was read against what survived — exact duplicates, near duplicates and every other filter
// counted apart — and the tokens of the surviving documents, from the lineage database alone.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace trail::corpus {

struct DocsBytes {
  int64_t documents = 0, bytes = 0;
};

struct SourceEffectiveData {
  std::string source;
  DocsBytes read;       // every input document of the source
  DocsBytes exact_dup;  // dropped as exact duplicates (drop_reason "exact_dup")
  DocsBytes near_dup;   // dropped as near duplicates ("near_dup")
  DocsBytes filtered;   // dropped by any other stage (language, quality, contamination, …)
  DocsBytes kept;
  std::map<std::string, int64_t> tokens;  // per split, of kept documents (after `corpus tokenize`)
  int64_t total_tokens() const;
  // Tokens the read bytes would give at the kept documents' bytes per token (an estimate: the
  // dropped documents were never tokenized); 0 before tokenization.
  double nominal_tokens() const;
};

// Sources in name order. Throws trail::Error naming the file when it is not a lineage database.
std::vector<SourceEffectiveData> EffectiveData(const std::string& lineage_db);

// "trail.plan.data.v1" (docs/plan.md, what `trail plan data --json` prints): per source its
// documents and bytes read, dropped and kept, tokens per split, kept and nominal tokens, and its
// epochs where `epochs` (source -> epochs of a run) has it.
nlohmann::ordered_json EffectiveDataJson(const std::vector<SourceEffectiveData>& sources,
                                         const std::map<std::string, double>& epochs);

}  // namespace trail::corpus
