#include "corpus/pipeline/effective_data.h"

#include <filesystem>

#include "corpus/pipeline/lineage_db.h"

namespace trail::corpus {
namespace {

std::string Column(sqlite3_stmt* st, int i) {
  const unsigned char* t = sqlite3_column_text(st, i);
  return t ? reinterpret_cast<const char*>(t) : "";
}

void Add(DocsBytes& d, int64_t documents, int64_t bytes) {
  d.documents += documents;
  d.bytes += bytes;
}

bool HasTable(Db& db, const char* name);

}  // namespace

int64_t SourceEffectiveData::total_tokens() const {
  int64_t n = 0;
  for (const auto& [split, t] : tokens) n += t;
  return n;
}

double SourceEffectiveData::nominal_tokens() const {
  if (kept.bytes == 0) return 0;
  return double(read.bytes) * double(total_tokens()) / double(kept.bytes);
}

namespace {

bool HasTable(Db& db, const char* name) {
  Stmt t(db.get(), "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?");
  t.Text(1, name);
  return sqlite3_step(t.get()) == SQLITE_ROW && sqlite3_column_int64(t.get(), 0) > 0;
}

}  // namespace

std::vector<SourceEffectiveData> EffectiveData(const std::string& lineage_db) {
  TRAIL_CHECK(std::filesystem::exists(lineage_db), lineage_db, ": lineage database not found");
  Db db(lineage_db);
  bool lineage = false;
  try {
    lineage = HasTable(db, "documents");
  } catch (const Error& e) {
    TRAIL_FAIL(lineage_db, ": not a lineage database (", e.what(), ")");
  }
  TRAIL_CHECK(lineage, lineage_db,
              ": not a lineage database (no documents table): give the "
              "lineage.sqlite of a corpus build's output directory");
  std::map<std::string, SourceEffectiveData> by_source;
  {
    Stmt st(db.get(),
            "SELECT source, kept, COALESCE(drop_reason, ''), COUNT(*), SUM(bytes) "
            "FROM documents GROUP BY source, kept, drop_reason");
    while (sqlite3_step(st.get()) == SQLITE_ROW) {
      SourceEffectiveData& s = by_source[Column(st.get(), 0)];
      const std::string reason = Column(st.get(), 2);
      const int64_t docs = sqlite3_column_int64(st.get(), 3),
                    bytes = sqlite3_column_int64(st.get(), 4);
      Add(s.read, docs, bytes);
      if (sqlite3_column_int64(st.get(), 1) != 0)
        Add(s.kept, docs, bytes);
      else if (reason == "exact_dup")
        Add(s.exact_dup, docs, bytes);
      else if (reason == "near_dup")
        Add(s.near_dup, docs, bytes);
      else
        Add(s.filtered, docs, bytes);
    }
  }
  if (HasTable(db, "tokens")) {
    Stmt st(db.get(),
            "SELECT d.source, t.split, SUM(t.tokens) FROM tokens t JOIN documents d "
            "ON d.key = t.key GROUP BY d.source, t.split");
    while (sqlite3_step(st.get()) == SQLITE_ROW) {
      by_source[Column(st.get(), 0)].tokens[Column(st.get(), 1)] =
          sqlite3_column_int64(st.get(), 2);
    }
  }
  std::vector<SourceEffectiveData> out;
  for (auto& [name, s] : by_source) {
    s.source = name;
    out.push_back(std::move(s));
  }
  return out;
}

nlohmann::ordered_json EffectiveDataJson(const std::vector<SourceEffectiveData>& sources,
                                         const std::map<std::string, double>& epochs) {
  auto db = [](const DocsBytes& d) {
    return nlohmann::ordered_json{{"documents", d.documents}, {"bytes", d.bytes}};
  };
  nlohmann::ordered_json j;
  j["format"] = "trail.plan.data.v1";
  for (const SourceEffectiveData& s : sources) {
    nlohmann::ordered_json row = {{"source", s.source},
                                  {"read", db(s.read)},
                                  {"exact_dup", db(s.exact_dup)},
                                  {"near_dup", db(s.near_dup)},
                                  {"filtered", db(s.filtered)},
                                  {"kept", db(s.kept)},
                                  {"tokens", s.tokens},
                                  {"kept_tokens", s.total_tokens()},
                                  {"nominal_tokens_estimate", s.nominal_tokens()}};
    if (const auto e = epochs.find(s.source); e != epochs.end()) row["epochs"] = e->second;
    j["sources"].push_back(row);
  }
  return j;
}

}  // namespace trail::corpus
