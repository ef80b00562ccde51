#include "audit/data_proof.h"

#include <algorithm>
#include <fstream>

#include "audit/publication.h"
#include "core/error.h"
#include "core/hash.h"
#include "core/le_bytes.h"
#include "data/document_set.h"
#include "fetch/source.h"
#include "train/run_dir.h"

namespace trail::audit {
namespace {

using Json = nlohmann::ordered_json;

std::string Str(const nlohmann::json& j, const char* key, const std::string& where) {
  TRAIL_CHECK(j.is_object() && j.contains(key) && j[key].is_string(), where, ": needs a string \"",
              key, "\"");
  return j[key].get<std::string>();
}

// A hash field, checked and in lower case (hashes compare as their hex text).
std::string Hash(const nlohmann::json& j, const char* key, const std::string& where) {
  return ToHex(DigestFromHex(Str(j, key, where), where + ": " + key));
}

uint64_t Uint(const nlohmann::json& j, const char* key, const std::string& where) {
  TRAIL_CHECK(j.is_object() && j.contains(key) && j[key].is_number_unsigned(), where,
              ": needs a non-negative integer \"", key, "\"");
  return j[key].get<uint64_t>();
}

// Tokens [a, b) of a document as ids.
std::vector<uint32_t> StretchTokens(const data::ShardReader& sh, uint64_t doc, data::TokenRange r) {
  const data::DocRecord rec = sh.doc(doc);
  std::vector<int32_t> raw(r.end - r.begin);
  sh.CopyTokens(rec.token_start + r.begin, raw.size(), raw.data());
  return {raw.begin(), raw.end()};
}

std::string Describe(const data::Reading& x) {
  return "step " + std::to_string(x.step) + " window " + std::to_string(x.window) +
         " document tokens [" + std::to_string(x.tokens.begin) + ", " +
         std::to_string(x.tokens.end) + ") at window offset " + std::to_string(x.window_offset) +
         " (" + std::to_string(x.targets) + " loss-bearing, pass " + std::to_string(x.pass) +
         ", chunk " + std::to_string(x.chunk) + ")";
}

bool Same(const data::Reading& a, const data::Reading& b) {
  return a.step == b.step && a.window == b.window && a.pass == b.pass && a.chunk == b.chunk &&
         a.tokens.begin == b.tokens.begin && a.tokens.end == b.tokens.end &&
         a.window_offset == b.window_offset && a.targets == b.targets;
}

// The claimed readings against the recomputed ones: the first that differs, or one missing or
// added, each named.
void CompareReadings(const std::vector<data::Reading>& claimed,
                     const std::vector<data::Reading>& stream, std::vector<std::string>& problems) {
  const size_t n = std::min(claimed.size(), stream.size());
  for (size_t i = 0; i < n; ++i) {
    if (Same(claimed[i], stream[i])) continue;
    problems.push_back("reading " + std::to_string(i) + ": the proof says " + Describe(claimed[i]) +
                       "; the stream has " + Describe(stream[i]));
    return;
  }
  if (claimed.size() > n) {
    problems.push_back("reading " + std::to_string(n) + " (" + Describe(claimed[n]) +
                       ") is not in the stream: the published steps read the stretch " +
                       std::to_string(stream.size()) + " times");
  } else if (stream.size() > n) {
    problems.push_back("the proof leaves out a reading: " + Describe(stream[n]) + " (" +
                       std::to_string(stream.size()) + " in all)");
  }
}

// Each reading's step consumes its window, by the published trajectory.
void CheckTrajectory(const std::string& run_dir, const std::vector<data::Reading>& readings,
                     std::vector<std::string>& problems) {
  const train::RunDirectory rd(run_dir);
  const auto records = rd.ReadTrajectory(rd.ReadInfo().genesis, false);
  for (const data::Reading& x : readings) {
    if (x.step < 0 || static_cast<size_t>(x.step) >= records.size()) {
      problems.push_back("step " + std::to_string(x.step) + " is not in the published trajectory");
      continue;
    }
    const uint64_t end = train::RecordedStateOf(records[x.step]).window_cursor;
    const uint64_t begin =
        x.step == 0 ? 0 : train::RecordedStateOf(records[x.step - 1]).window_cursor;
    if (x.window < begin || x.window >= end) {
      problems.push_back("the trajectory's step " + std::to_string(x.step) + " consumes windows [" +
                         std::to_string(begin) + ", " + std::to_string(end) + "), not window " +
                         std::to_string(x.window));
    }
  }
}

// The committed set of a publication: its size, and entry i on demand (a chunk per new probe).
class RemoteSet {
 public:
  explicit RemoteSet(RemoteRun& remote) : remote_(remote) {
    const fetch::RemoteFile* f = remote.publication().Find(data::kDocumentSetPath);
    TRAIL_CHECK(f != nullptr, "the publication commits to no training-document set (",
                data::kDocumentSetPath, "): it was published before trail made one");
    const std::string head =
        remote.ReadRange(data::kDocumentSetPath, 0, data::kDocumentSetHeaderBytes);
    count_ = data::ParseDocumentSetHeader(reinterpret_cast<const uint8_t*>(head.data()), f->size,
                                          data::kDocumentSetPath);
  }
  uint64_t count() const { return count_; }
  std::string Entry(uint64_t i) {
    const uint64_t at = data::kDocumentSetHeaderBytes + 32 * i;
    const std::string bytes = remote_.ReadRange(data::kDocumentSetPath, at, at + 32);
    return HexOf({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()});
  }

 private:
  RemoteRun& remote_;
  uint64_t count_ = 0;
};

Json HexOrNull(const std::string& h) { return h.empty() ? Json() : Json(h); }

std::string HexOrEmpty(const nlohmann::json& j, const char* key, const std::string& where) {
  TRAIL_CHECK(j.contains(key), where, ": needs \"", key, "\" (a hash or null)");
  if (j[key].is_null()) return "";
  TRAIL_CHECK(j[key].is_string(), where, ": \"", key, "\" must be a hash or null");
  return Hash(j, key, where);
}

nlohmann::json ParseProofJson(const std::string& text, const std::string& where) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const std::exception&) {
    TRAIL_FAIL(where, ": not JSON (a proof is what `trail data find --proof` writes)");
  }
  TRAIL_CHECK(j.is_object() && Str(j, "format", where) == kDataProofFormat, where, ": not a ",
              kDataProofFormat, " proof");
  return j;
}

}  // namespace

std::string DataProofKind(const std::string& text, const std::string& where) {
  const std::string kind = Str(ParseProofJson(text, where), "kind", where);
  TRAIL_CHECK(kind == "membership" || kind == "absence" || kind == "near-absence", where,
              ": unknown proof kind '", kind, "'");
  return kind;
}

Json AbsenceProofToJson(const AbsenceProof& p) {
  return {{"format", kDataProofFormat},
          {"kind", "absence"},
          {"publication", p.root},
          {"tokens", p.tokens},
          {"tokens_sha256", p.tokens_sha256},
          {"set", p.set},
          {"count", p.count},
          {"index", p.index},
          {"before", HexOrNull(p.before)},
          {"after", HexOrNull(p.after)}};
}

AbsenceProof ParseAbsenceProof(const std::string& text, const std::string& where) {
  const nlohmann::json j = ParseProofJson(text, where);
  TRAIL_CHECK(Str(j, "kind", where) == "absence", where, ": not an absence proof");
  AbsenceProof p;
  p.root = Hash(j, "publication", where);
  TRAIL_CHECK(j.contains("tokens") && j["tokens"].is_array() && !j["tokens"].empty(), where,
              ": needs a non-empty \"tokens\" array of ids");
  for (const auto& t : j["tokens"]) {
    TRAIL_CHECK(t.is_number_unsigned() && t.get<uint64_t>() < (uint64_t{1} << 32), where,
                ": \"tokens\" holds something that is not a token id");
    p.tokens.push_back(t.get<uint32_t>());
  }
  p.tokens_sha256 = Hash(j, "tokens_sha256", where);
  p.set = Str(j, "set", where);
  p.count = Uint(j, "count", where);
  p.index = Uint(j, "index", where);
  p.before = HexOrEmpty(j, "before", where);
  p.after = HexOrEmpty(j, "after", where);
  return p;
}

AbsenceProof MakeAbsenceProof(const std::vector<uint32_t>& tokens, const RemoteOptions& o) {
  TRAIL_CHECK(!tokens.empty(), "the query has no tokens");
  RemoteRun remote(o);
  RemoteSet set(remote);
  AbsenceProof p;
  p.root = remote.publication().root;
  p.tokens = tokens;
  p.tokens_sha256 = ToHex(data::TokensHash(tokens));
  p.set = data::kDocumentSetPath;
  p.count = set.count();
  uint64_t lo = 0, hi = set.count();  // the first entry >= the hash (hex compares as bytes)
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo) / 2;
    if (set.Entry(mid) < p.tokens_sha256)
      lo = mid + 1;
    else
      hi = mid;
  }
  p.index = lo;
  p.after = lo < set.count() ? set.Entry(lo) : "";
  TRAIL_CHECK(p.after != p.tokens_sha256,
              "a training document has exactly these tokens, so their absence cannot be proved "
              "(`trail data find` shows where it is and when it was read)");
  p.before = lo > 0 ? set.Entry(lo - 1) : "";
  return p;
}

bool BeginProofCheck(RemoteRun& remote, const std::string& root, bool bind, ProofCheck& c) {
  const Publication& pub = remote.publication();
  c.root = pub.root;
  c.bundle_bytes = pub.total_bytes();
  if (pub.root != root) {
    c.problems.push_back("the proof is for publication " + root + "; this bundle's root is " +
                         pub.root);
    return false;
  }
  if (bind) {
    remote.Bind();
    c.signer = remote.binding().signer;
    c.binding = remote.binding().binding;
  }
  return true;
}

Json ProofCheckToJson(const ProofCheck& c) {
  return {{"ok", c.ok()},
          {"root", c.root},
          {"signer", c.signer},
          {"binding", c.binding},
          {"problems", c.problems},
          {"fetched_bytes", c.fetched_bytes},
          {"bundle_bytes", c.bundle_bytes}};
}

ProofCheck VerifyAbsenceProof(const AbsenceProof& p, const RemoteOptions& o) {
  RemoteRun remote(o);
  ProofCheck c;
  if (!BeginProofCheck(remote, p.root, true, c)) return c;
  if (ToHex(data::TokensHash(p.tokens)) != p.tokens_sha256) {
    c.problems.push_back("the proof's tokens do not hash to its tokens_sha256");
  }
  if (p.set != data::kDocumentSetPath) {
    c.problems.push_back("the proof names the set " + p.set + ", not " + data::kDocumentSetPath);
    return c;
  }
  RemoteSet set(remote);
  if (p.count != set.count() || p.index > set.count()) {
    c.problems.push_back("the published set holds " + std::to_string(set.count()) +
                         " hashes; the proof says " + std::to_string(p.count) + " and index " +
                         std::to_string(p.index));
    return c;
  }
  const std::string before = p.index > 0 ? set.Entry(p.index - 1) : "";
  const std::string after = p.index < set.count() ? set.Entry(p.index) : "";
  if (before != p.before || after != p.after) {
    c.problems.push_back("the published entries on either side of index " +
                         std::to_string(p.index) + " are not the proof's");
  } else if ((!before.empty() && !(before < p.tokens_sha256)) ||
             (!after.empty() && !(p.tokens_sha256 < after))) {
    c.problems.push_back("the published entries around index " + std::to_string(p.index) +
                         " do not enclose the tokens' hash: a training document has it, or "
                         "the index is wrong");
  }
  c.fetched_bytes = remote.totals().fetched_bytes;
  return c;
}

Json MembershipProofToJson(const MembershipProof& p) {
  Json reads = Json::array();
  for (const data::Reading& x : p.readings) reads.push_back(data::ReadingToJson(x));
  return {{"format", kDataProofFormat},
          {"kind", "membership"},
          {"publication", p.root},
          {"document", {{"source", p.source}, {"shard", p.shard}, {"doc", p.doc}, {"key", p.key}}},
          {"doc_tokens", {p.tokens.begin, p.tokens.end}},
          {"tokens_sha256", p.tokens_sha256},
          {"steps", p.steps},
          {"readings", std::move(reads)}};
}

MembershipProof ParseMembershipProof(const std::string& text, const std::string& where) {
  const nlohmann::json j = ParseProofJson(text, where);
  TRAIL_CHECK(Str(j, "kind", where) == "membership", where, ": not a membership proof");
  MembershipProof p;
  p.root = Hash(j, "publication", where);
  const std::string doc_where = where + ": document";
  TRAIL_CHECK(j.contains("document"), where, ": needs \"document\"");
  p.source = Str(j["document"], "source", doc_where);
  p.shard = Str(j["document"], "shard", doc_where);
  p.key = Str(j["document"], "key", doc_where);
  p.doc = Uint(j["document"], "doc", doc_where);
  const nlohmann::json& r = j.contains("doc_tokens") ? j["doc_tokens"] : nlohmann::json();
  TRAIL_CHECK(r.is_array() && r.size() == 2 && r[0].is_number_unsigned() &&
                  r[1].is_number_unsigned() && r[0].get<uint64_t>() < r[1].get<uint64_t>(),
              where, ": needs \"doc_tokens\": [begin, end) with begin < end");
  p.tokens = {r[0].get<uint64_t>(), r[1].get<uint64_t>()};
  p.tokens_sha256 = Hash(j, "tokens_sha256", where);
  p.steps = static_cast<int64_t>(Uint(j, "steps", where));
  TRAIL_CHECK(j.contains("readings") && j["readings"].is_array(), where,
              ": needs a \"readings\" array");
  for (size_t i = 0; i < j["readings"].size(); ++i) {
    p.readings.push_back(
        data::ReadingFromJson(j["readings"][i], where + ": reading " + std::to_string(i)));
  }
  return p;
}

MembershipProof MakeMembershipProof(data::CanonicalStream& stream, const Digest& manifest_sha256,
                                    const data::SharedRun& run, const std::string& bundle) {
  const auto source = fetch::OpenSource(bundle);
  const Publication pub =
      ParsePublication(source->ReadSmall(kPublicationFile, kMaxPublicationBytes),
                       source->Describe(kPublicationFile));
  TRAIL_CHECK(pub.Get(pub.manifest).sha256 == ToHex(manifest_sha256), bundle,
              ": the publication's data manifest is not the one searched (its SHA-256 differs)");
  const data::DocumentRef& ref = run.ref;
  MembershipProof p;
  p.root = pub.root;
  p.source = run.source;
  p.shard = BundleShardPath(stream.manifest().sources[ref.source].shards[ref.shard]);
  p.key = run.key;
  p.doc = ref.doc;
  p.tokens = run.doc_tokens;
  p.tokens_sha256 = ToHex(data::TokensHash(
      StretchTokens(stream.source(ref.source).shard(ref.shard), ref.doc, run.doc_tokens)));
  p.steps = pub.run.steps;
  p.readings = data::ReadDocument(stream, ref, run.doc_tokens, pub.run.steps);
  return p;
}

ProofCheck VerifyMembershipProof(const MembershipProof& p, const RemoteOptions& o) {
  RemoteRun remote(o);
  const Publication& pub = remote.publication();
  ProofCheck c;
  if (!BeginProofCheck(remote, p.root, false, c)) return c;  // FetchDataIndexes binds
  if (p.steps != pub.run.steps) {
    c.problems.push_back("the proof counts " + std::to_string(p.steps) +
                         " steps; the publication has " + std::to_string(pub.run.steps));
  }
  const std::string manifest_path = remote.FetchDataIndexes();
  c.signer = remote.binding().signer;
  c.binding = remote.binding().binding;
  TRAIL_CHECK(pub.Find(p.shard) != nullptr, "the proof's shard ", p.shard,
              " is not in the publication");
  {  // the document's record, to fetch exactly its stretch's tokens
    data::ShardExpectations partial;  // only the chunks fetched are there: no rehash
    partial.verify_hash = false;
    const data::ShardReader sh(remote.local_path(p.shard), partial);
    TRAIL_CHECK(p.doc < sh.num_docs(), p.shard, " has ", sh.num_docs(),
                " documents; the proof names document ", p.doc);
    const uint64_t start = sh.doc(p.doc).token_start;
    remote.FetchShardTokens(p.shard, start + p.tokens.begin,
                            start + std::min<uint64_t>(p.tokens.end, sh.doc_length(p.doc)));
  }
  data::CanonicalStream stream(data::LoadManifest(manifest_path), data::StreamOptions{false});
  const data::Manifest& m = stream.manifest();
  data::DocumentRef ref{UINT32_MAX, 0, p.doc};
  for (uint32_t s = 0; s < m.sources.size(); ++s) {
    if (m.sources[s].name != p.source) continue;
    for (uint32_t j = 0; j < m.sources[s].shards.size(); ++j) {
      if (BundleShardPath(m.sources[s].shards[j]) == p.shard) ref = {s, j, p.doc};
    }
  }
  TRAIL_CHECK(ref.source != UINT32_MAX, "the manifest has no training shard ", p.shard,
              " in source '", p.source, "'");
  const data::ShardReader& sh = stream.source(ref.source).shard(ref.shard);
  if (sh.doc_key(p.doc) != p.key) {
    c.problems.push_back("document " + std::to_string(p.doc) + " of " + p.shard + " has the key '" +
                         std::string(sh.doc_key(p.doc)) + "', not '" + p.key + "'");
  }
  if (p.tokens.end > sh.doc_length(p.doc)) {
    c.problems.push_back("document " + std::to_string(p.doc) + " has " +
                         std::to_string(sh.doc_length(p.doc)) + " tokens; the proof claims [" +
                         std::to_string(p.tokens.begin) + ", " + std::to_string(p.tokens.end) +
                         ")");
    return c;
  }
  if (ToHex(data::TokensHash(StretchTokens(sh, p.doc, p.tokens))) != p.tokens_sha256) {
    c.problems.push_back("the published tokens of document " + std::to_string(p.doc) + " [" +
                         std::to_string(p.tokens.begin) + ", " + std::to_string(p.tokens.end) +
                         ") do not have the proof's tokens_sha256");
  }
  CompareReadings(p.readings, data::ReadDocument(stream, ref, p.tokens, pub.run.steps), c.problems);
  CheckTrajectory(remote.run_dir(), p.readings, c.problems);
  c.fetched_bytes = remote.totals().fetched_bytes;
  return c;
}

}  // namespace trail::audit
