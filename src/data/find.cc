#include "data/find.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <optional>
#include <set>

#include "core/error.h"

namespace trail::data {
namespace {

SharedRun MakeRun(CanonicalStream& s, uint64_t number, const DocumentRef& ref, TokenRange doc,
                  uint64_t query_begin, uint64_t query_tokens) {
  const SourceStream& src = s.source(ref.source);
  SharedRun r;
  r.number = number;
  r.ref = ref;
  r.source = src.name();
  r.key = std::string(src.shard(ref.shard).doc_key(ref.doc));
  r.doc_tokens = doc;
  r.query_begin = query_begin;
  r.doc_length = src.shard(ref.shard).doc_length(ref.doc);
  r.whole_query = query_begin == 0 && doc.end - doc.begin == query_tokens;
  r.whole_document = doc.begin == 0 && doc.end == r.doc_length;
  return r;
}

void AddReadings(CanonicalStream& s, SharedRun& r, int64_t steps) {
  if (steps <= 0) return;
  r.readings = ReadDocument(s, r.ref, r.doc_tokens, steps);
  std::set<int64_t> steps_read;
  for (const Reading& x : r.readings) {
    steps_read.insert(x.step);
    r.targets += x.targets;
    r.context += (x.tokens.end - x.tokens.begin) - x.targets;
  }
  r.steps_read = steps_read.size();
}

// The maximal run through query[qi, qi + n) = doc[di, di + n), or none when the gram's tokens
// differ (a hash collision).
bool Extend(const std::vector<uint32_t>& q, const std::vector<uint32_t>& d, uint64_t qi,
            uint64_t di, uint64_t n, uint64_t& qs, uint64_t& ds, uint64_t& len) {
  if (di + n > d.size() || !std::equal(q.begin() + qi, q.begin() + qi + n, d.begin() + di)) {
    return false;
  }
  qs = qi, ds = di;
  while (qs > 0 && ds > 0 && q[qs - 1] == d[ds - 1]) --qs, --ds;
  len = qi + n - qs;
  while (qs + len < q.size() && ds + len < d.size() && q[qs + len] == d[ds + len]) ++len;
  return true;
}

}  // namespace

FindResult FindTokens(CanonicalStream& stream, const FindIndex& index,
                      const std::vector<uint32_t>& query, const FindOptions& opt) {
  TRAIL_CHECK(!query.empty(), "the query has no tokens");
  TRAIL_CHECK(opt.min_tokens >= 1, "--min-tokens must be at least 1");
  FindResult res;
  res.query_tokens = query.size();
  for (const SourceSpec& src : stream.manifest().sources) {
    for (const ShardRef& sh : src.shards) res.training_tokens += sh.tokens;
  }
  res.guaranteed_tokens = index.guaranteed_tokens();
  // A query shorter than min_tokens is still looked for whole.
  res.min_tokens = std::min<uint64_t>(opt.min_tokens, query.size());
  const DocumentNumbers numbers(stream);
  TRAIL_CHECK(numbers.size() == index.num_docs(), "the find index lists ", index.num_docs(),
              " documents where the manifest has ", numbers.size());
  res.same_documents = index.DocumentsWithHash(TokensHash(query));

  const uint32_t n = index.gram();
  std::map<uint64_t, std::vector<uint32_t>> docs;  // tokens of the documents touched
  // Runs found, per (document, diagonal = doc offset - query offset): their query ranges.
  std::map<std::pair<uint64_t, int64_t>, std::vector<std::pair<uint64_t, uint64_t>>> seen;
  for (uint32_t qi : WinnowedGrams(query, n, index.window())) {
    ++res.grams_looked_up;
    const auto hits =
        index.GramsWithHash(GramHash(query.data() + qi, n), opt.max_hits_per_gram, &res.truncated);
    for (const FindIndex::GramHit& h : hits) {
      ++res.candidates;
      auto& covered = seen[{h.doc, int64_t(h.offset) - int64_t(qi)}];
      if (std::any_of(covered.begin(), covered.end(),
                      [&](const auto& c) { return c.first <= qi && qi < c.second; })) {
        continue;
      }
      const DocumentRef ref = numbers.Ref(h.doc);
      auto it = docs.find(h.doc);
      if (it == docs.end()) {
        it = docs.emplace(h.doc, DocumentTokens(stream, ref)).first;
      }
      uint64_t qs, ds, len;
      if (!Extend(query, it->second, qi, h.offset, n, qs, ds, len)) continue;
      covered.push_back({qs, qs + len});
      if (len < res.min_tokens) continue;
      res.runs.push_back(MakeRun(stream, h.doc, ref, {ds, ds + len}, qs, query.size()));
    }
  }
  // Documents equal to a query too short for a gram.
  for (uint64_t g : res.same_documents) {
    const bool listed = std::any_of(res.runs.begin(), res.runs.end(), [&](const SharedRun& r) {
      return r.number == g && r.whole_document;
    });
    if (!listed) {
      const DocumentRef ref = numbers.Ref(g);
      res.runs.push_back(MakeRun(stream, g, ref, {0, query.size()}, 0, query.size()));
    }
  }
  std::sort(res.runs.begin(), res.runs.end(), [](const SharedRun& a, const SharedRun& b) {
    const uint64_t la = a.doc_tokens.end - a.doc_tokens.begin;
    const uint64_t lb = b.doc_tokens.end - b.doc_tokens.begin;
    if (la != lb) return la > lb;
    return std::tie(a.number, a.doc_tokens.begin) < std::tie(b.number, b.doc_tokens.begin);
  });
  for (SharedRun& r : res.runs) AddReadings(stream, r, opt.steps);
  return res;
}

namespace {

nlohmann::ordered_json Range(TokenRange r) { return {r.begin, r.end}; }

}  // namespace

nlohmann::ordered_json ReadingToJson(const Reading& x) {
  return {{"step", x.step},
          {"window", x.window},
          {"pass", x.pass},
          {"chunk", x.chunk},
          {"doc_tokens", Range(x.tokens)},
          {"window_offset", x.window_offset},
          {"loss_tokens", x.targets},
          {"context_tokens", (x.tokens.end - x.tokens.begin) - x.targets}};
}

Reading ReadingFromJson(const nlohmann::json& j, const std::string& where) {
  auto u = [&](const char* key) {
    TRAIL_CHECK(j.is_object() && j.contains(key) && j[key].is_number_unsigned(), where,
                ": reading needs a non-negative integer \"", key, "\"");
    return j[key].get<uint64_t>();
  };
  Reading x;
  x.step = static_cast<int64_t>(u("step"));
  x.window = u("window");
  x.pass = u("pass");
  x.chunk = static_cast<uint32_t>(u("chunk"));
  x.window_offset = u("window_offset");
  x.targets = u("loss_tokens");
  const nlohmann::json& r = j["doc_tokens"];
  TRAIL_CHECK(r.is_array() && r.size() == 2 && r[0].is_number_unsigned() &&
                  r[1].is_number_unsigned() && r[0].get<uint64_t>() < r[1].get<uint64_t>(),
              where, ": reading needs \"doc_tokens\": [begin, end) with begin < end");
  x.tokens = {r[0].get<uint64_t>(), r[1].get<uint64_t>()};
  TRAIL_CHECK(x.targets + u("context_tokens") == x.tokens.end - x.tokens.begin, where,
              ": loss_tokens and context_tokens do not add up to doc_tokens");
  return x;
}

nlohmann::ordered_json SharedRunToJson(const SharedRun& r) {
  nlohmann::ordered_json j = {
      {"source", r.source},
      {"shard", r.ref.shard},
      {"doc", r.ref.doc},
      {"key", r.key},
      {"doc_tokens", Range(r.doc_tokens)},
      {"query_tokens", {r.query_begin, r.query_begin + (r.doc_tokens.end - r.doc_tokens.begin)}},
      {"doc_length", r.doc_length},
      {"whole_query", r.whole_query},
      {"whole_document", r.whole_document},
      {"steps_read", r.steps_read},
      {"loss_tokens", r.targets},
      {"context_tokens", r.context}};
  nlohmann::ordered_json reads = nlohmann::ordered_json::array();
  for (const Reading& x : r.readings) reads.push_back(ReadingToJson(x));
  j["readings"] = std::move(reads);
  return j;
}

nlohmann::ordered_json FindResultToJson(CanonicalStream& stream, const FindResult& r) {
  const DocumentNumbers numbers(stream);
  nlohmann::ordered_json same = nlohmann::ordered_json::array();
  for (uint64_t g : r.same_documents) {
    const DocumentRef ref = numbers.Ref(g);
    const SourceStream& src = stream.source(ref.source);
    same.push_back({{"source", src.name()},
                    {"shard", ref.shard},
                    {"doc", ref.doc},
                    {"key", std::string(src.shard(ref.shard).doc_key(ref.doc))}});
  }
  nlohmann::ordered_json runs = nlohmann::ordered_json::array();
  for (const SharedRun& x : r.runs) runs.push_back(SharedRunToJson(x));
  return {{"format", "trail.data-find.v1"},
          {"query_tokens", r.query_tokens},
          {"training_tokens", r.training_tokens},
          {"guaranteed_tokens", r.guaranteed_tokens},
          {"min_tokens", r.min_tokens},
          {"same_documents", std::move(same)},
          {"runs", std::move(runs)},
          {"grams_looked_up", r.grams_looked_up},
          {"candidates", r.candidates},
          {"truncated", r.truncated}};
}

std::vector<TextItem> ReadTextJsonl(const std::string& path) {
  std::ifstream in(path);
  TRAIL_CHECK(in.good(), path, ": cannot read");
  std::vector<TextItem> out;
  std::string line;
  for (size_t n = 1; std::getline(in, line); ++n) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = path + ":" + std::to_string(n);
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const std::exception&) {
      TRAIL_FAIL(where, ": not a JSON object");
    }
    TRAIL_CHECK(j.is_object() && j.contains("text") && j["text"].is_string(), where,
                ": needs a string \"text\"");
    std::string id = std::to_string(n);
    if (j.contains("id")) id = j["id"].is_string() ? j["id"].get<std::string>() : j["id"].dump();
    out.push_back({where, id, j["text"].get<std::string>()});
  }
  TRAIL_CHECK(!out.empty(), path, ": no texts");
  return out;
}

std::optional<SharedRun> FindKeyIfTrained(CanonicalStream& stream, const std::string& key,
                                          int64_t steps) {
  const DocumentNumbers numbers(stream);
  for (uint64_t g = 0; g < numbers.size(); ++g) {
    const DocumentRef ref = numbers.Ref(g);
    const ShardReader& sh = stream.source(ref.source).shard(ref.shard);
    if (sh.doc_key(ref.doc) != key) continue;
    const uint64_t len = sh.doc_length(ref.doc);
    SharedRun r = MakeRun(stream, g, ref, {0, len}, 0, len);
    AddReadings(stream, r, steps);
    return r;
  }
  return std::nullopt;
}

SharedRun FindKey(CanonicalStream& stream, const std::string& key, int64_t steps) {
  TRAIL_CHECK(!key.empty(), "the document key is empty");
  std::optional<SharedRun> r = FindKeyIfTrained(stream, key, steps);
  TRAIL_CHECK(r.has_value(), "no training document has the key '", key,
              "' (a document dropped by the corpus factory has none: `trail corpus why` says why)");
  return std::move(*r);
}

void AddSurvivorReadings(CanonicalStream& stream, std::vector<BuildVerdict>& verdicts,
                         int64_t steps) {
  for (BuildVerdict& v : verdicts) {
    if (v.survivor.empty()) continue;
    const std::optional<SharedRun> r = FindKeyIfTrained(stream, v.survivor, steps);
    v.survivor_steps_read = r ? std::optional<uint64_t>(r->steps_read) : std::nullopt;
  }
}

nlohmann::ordered_json BuildVerdictToJson(const BuildVerdict& v) {
  nlohmann::ordered_json j = {{"key", v.key},     {"source", v.source},   {"kept", v.kept},
                              {"split", v.split}, {"dropped", v.dropped}, {"survivor", v.survivor}};
  if (!v.survivor.empty()) {
    j["survivor_steps_read"] =
        v.survivor_steps_read ? nlohmann::ordered_json(*v.survivor_steps_read) : nullptr;
  }
  return j;
}

}  // namespace trail::data
