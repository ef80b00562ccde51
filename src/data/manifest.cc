#include "data/manifest.h"

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "core/error.h"
#include "core/file_util.h"
#include "core/hash.h"

namespace trail::data {
namespace {

using Json = nlohmann::ordered_json;

// Strict field access: every error names the manifest and the JSON path.
class Reader {
 public:
  Reader(const Json& j, std::string where, const std::string& file)
      : j_(j), where_(std::move(where)), file_(file) {
    TRAIL_CHECK(j_.is_object(), file_, ": ", where_, " must be an object");
  }
  void AllowOnly(std::initializer_list<const char*> keys) const {
    std::set<std::string> ok(keys.begin(), keys.end());
    for (auto it = j_.begin(); it != j_.end(); ++it) {
      TRAIL_CHECK(ok.count(it.key()) == 1, file_, ": unknown key '", it.key(), "' in ", where_);
    }
  }
  bool Has(const char* k) const { return j_.contains(k); }
  const Json& Get(const char* k) const {
    TRAIL_CHECK(j_.contains(k), file_, ": missing '", k, "' in ", where_);
    return j_.at(k);
  }
  std::string Str(const char* k) const {
    const Json& v = Get(k);
    TRAIL_CHECK(v.is_string(), file_, ": ", where_, ".", k, " must be a string");
    return v.get<std::string>();
  }
  std::string Str(const char* k, const std::string& dflt) const { return Has(k) ? Str(k) : dflt; }
  uint64_t U64(const char* k) const {
    const Json& v = Get(k);
    TRAIL_CHECK(v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0), file_,
                ": ", where_, ".", k, " must be a non-negative integer");
    return v.get<uint64_t>();
  }
  uint64_t U64(const char* k, uint64_t dflt) const { return Has(k) ? U64(k) : dflt; }
  int64_t I64(const char* k, int64_t dflt) const {
    if (!Has(k)) return dflt;
    const Json& v = Get(k);
    TRAIL_CHECK(v.is_number_integer(), file_, ": ", where_, ".", k, " must be an integer");
    return v.get<int64_t>();
  }
  double Num(const char* k) const {
    const Json& v = Get(k);
    TRAIL_CHECK(v.is_number(), file_, ": ", where_, ".", k, " must be a number");
    return v.get<double>();
  }
  bool Bool(const char* k, bool dflt) const {
    if (!Has(k)) return dflt;
    const Json& v = Get(k);
    TRAIL_CHECK(v.is_boolean(), file_, ": ", where_, ".", k, " must be true or false");
    return v.get<bool>();
  }
  const Json& Array(const char* k) const {
    const Json& v = Get(k);
    TRAIL_CHECK(v.is_array(), file_, ": ", where_, ".", k, " must be an array");
    return v;
  }
  template <class E>
  E Enum(const char* k, E dflt, std::initializer_list<std::pair<const char*, E>> names) const {
    if (!Has(k)) return dflt;
    const std::string s = Str(k);
    std::string list;
    for (const auto& [n, e] : names) {
      if (s == n) return e;
      list += std::string(list.empty() ? "" : ", ") + n;
    }
    TRAIL_FAIL(file_, ": ", where_, ".", k, " is '", s, "'; expected one of: ", list);
  }
  std::string Sub(const std::string& k) const { return where_ + "." + k; }
  const std::string& file() const { return file_; }

 private:
  const Json& j_;
  std::string where_;
  const std::string& file_;
};

std::vector<ShardRef> ParseShards(const Reader& parent, const std::string& where) {
  std::vector<ShardRef> out;
  const Json& arr = parent.Array("shards");
  for (size_t i = 0; i < arr.size(); ++i) {
    Reader r(arr[i], where + ".shards[" + std::to_string(i) + "]", parent.file());
    r.AllowOnly({"path", "sha256", "tokens", "documents"});
    ShardRef s;
    s.path = r.Str("path");
    s.sha256 = r.Str("sha256");
    TRAIL_CHECK(s.sha256.size() == 64 &&
                    s.sha256.find_first_not_of("0123456789abcdef") == std::string::npos,
                parent.file(), ": ", where, " shard '", s.path,
                "': sha256 must be 64 lowercase hex");
    s.tokens = r.U64("tokens");
    s.documents = r.U64("documents");
    out.push_back(std::move(s));
  }
  return out;
}

Json ShardsToJson(const std::vector<ShardRef>& shards) {
  Json arr = Json::array();
  for (const ShardRef& s : shards) {
    arr.push_back(Json{
        {"path", s.path}, {"sha256", s.sha256}, {"tokens", s.tokens}, {"documents", s.documents}});
  }
  return arr;
}

// "mixture_phases": [{"from_step": N, "shares": {"source": share, …}}, …]
void ParseMixturePhases(const Reader& r, StreamConfig& c) {
  const Json& arr = r.Array("mixture_phases");
  for (size_t i = 0; i < arr.size(); ++i) {
    Reader p(arr[i], r.Sub("mixture_phases[" + std::to_string(i) + "]"), r.file());
    p.AllowOnly({"from_step", "shares"});
    MixturePhase phase;
    phase.from_step = static_cast<int64_t>(p.U64("from_step"));
    const Json& shares = p.Get("shares");
    TRAIL_CHECK(shares.is_object() && !shares.empty(), r.file(), ": stream.mixture_phases[", i,
                "].shares must be an object of source names and shares");
    for (auto it = shares.begin(); it != shares.end(); ++it) {
      TRAIL_CHECK(it.value().is_number(), r.file(), ": stream.mixture_phases[", i, "].shares.",
                  it.key(), " must be a number");
      phase.shares.push_back({it.key(), it.value().get<double>()});
    }
    c.mixture_phases.push_back(std::move(phase));
  }
}

// "seq_len_phases": [{"from_step": N, "seq_len": L}, …]
void ParseSeqLenPhases(const Reader& r, StreamConfig& c) {
  const Json& arr = r.Array("seq_len_phases");
  for (size_t i = 0; i < arr.size(); ++i) {
    Reader p(arr[i], r.Sub("seq_len_phases[" + std::to_string(i) + "]"), r.file());
    p.AllowOnly({"from_step", "seq_len"});
    c.seq_len_phases.push_back(
        {static_cast<int64_t>(p.U64("from_step")), static_cast<int64_t>(p.U64("seq_len"))});
  }
}

void ParseStream(const Reader& r, StreamConfig& c) {
  r.AllowOnly({"seed", "seq_len", "append_eos", "prepend_bos", "chunking",
               "replacement_block_tokens", "semantics", "positions", "batch_schedule",
               "micro_batch_windows", "mixture_phases", "seq_len_phases"});
  c.seed = r.U64("seed");
  c.seq_len = static_cast<int64_t>(r.U64("seq_len"));
  TRAIL_CHECK(c.seq_len >= 1 && c.seq_len <= (1 << 24), r.file(), ": stream.seq_len ", c.seq_len,
              " out of range");
  c.append_eos = r.Bool("append_eos", true);
  c.prepend_bos = r.Bool("prepend_bos", false);
  c.replacement_block_tokens = r.U64("replacement_block_tokens", c.replacement_block_tokens);
  TRAIL_CHECK(c.replacement_block_tokens >= 1, r.file(),
              ": stream.replacement_block_tokens must be positive");
  c.semantics =
      r.Enum("semantics", Semantics::kIndependent,
             {{"independent", Semantics::kIndependent}, {"continuous", Semantics::kContinuous}});
  c.positions = r.Enum("positions", PositionMode::kDocument,
                       {{"document", PositionMode::kDocument}, {"window", PositionMode::kWindow}});
  if (r.Has("chunking")) {
    Reader ch(r.Get("chunking"), r.Sub("chunking"), r.file());
    ch.AllowOnly({"max_tokens", "overlap", "overlap_loss", "boundary"});
    c.chunking.max_tokens = static_cast<uint32_t>(ch.U64("max_tokens", 0));
    c.chunking.overlap = static_cast<uint32_t>(ch.U64("overlap", 0));
    c.chunking.overlap_loss_once = ch.Enum("overlap_loss", true, {{"once", true}, {"both", false}});
    c.chunking.boundary = ch.Enum("boundary", ChunkBoundary::kIndependent,
                                  {{"independent", ChunkBoundary::kIndependent},
                                   {"continuation", ChunkBoundary::kContinuation}});
    TRAIL_CHECK(c.chunking.max_tokens == 0 || c.chunking.overlap < c.chunking.max_tokens, r.file(),
                ": stream.chunking.overlap must be smaller than max_tokens");
    TRAIL_CHECK(c.chunking.max_tokens != 0 || c.chunking.overlap == 0, r.file(),
                ": stream.chunking.overlap needs max_tokens");
  }
  if (r.Has("batch_schedule")) {
    c.schedule.clear();
    const Json& arr = r.Array("batch_schedule");
    for (size_t i = 0; i < arr.size(); ++i) {
      Reader p(arr[i], r.Sub("batch_schedule[" + std::to_string(i) + "]"), r.file());
      p.AllowOnly({"from_step", "windows"});
      c.schedule.push_back(
          {static_cast<int64_t>(p.U64("from_step")), static_cast<int64_t>(p.U64("windows"))});
    }
  }
  c.micro_batch_windows = static_cast<int64_t>(r.U64("micro_batch_windows", 1));
  if (r.Has("mixture_phases")) ParseMixturePhases(r, c);
  if (r.Has("seq_len_phases")) ParseSeqLenPhases(r, c);
}

Json StreamToJson(const StreamConfig& c) {
  Json sched = Json::array();
  for (const BatchPhase& p : c.schedule) {
    sched.push_back(Json{{"from_step", p.from_step}, {"windows", p.windows}});
  }
  Json j;
  j["seed"] = c.seed;
  j["seq_len"] = c.seq_len;
  j["append_eos"] = c.append_eos;
  if (c.prepend_bos) j["prepend_bos"] = true;  // only when on: other manifests keep their bytes
  j["chunking"] =
      Json{{"max_tokens", c.chunking.max_tokens},
           {"overlap", c.chunking.overlap},
           {"overlap_loss", c.chunking.overlap_loss_once ? "once" : "both"},
           {"boundary",
            c.chunking.boundary == ChunkBoundary::kIndependent ? "independent" : "continuation"}};
  j["replacement_block_tokens"] = c.replacement_block_tokens;
  j["semantics"] = c.semantics == Semantics::kIndependent ? "independent" : "continuous";
  j["positions"] = c.positions == PositionMode::kDocument ? "document" : "window";
  j["batch_schedule"] = sched;
  j["micro_batch_windows"] = c.micro_batch_windows;
  if (!c.mixture_phases.empty()) {  // absent otherwise: manifests without phases keep their bytes
    Json phases = Json::array();
    for (const MixturePhase& p : c.mixture_phases) {
      Json shares = Json::object();
      for (const auto& [name, share] : p.shares) shares[name] = share;
      phases.push_back(Json{{"from_step", p.from_step}, {"shares", shares}});
    }
    j["mixture_phases"] = phases;
  }
  if (!c.seq_len_phases.empty()) {  // likewise
    Json phases = Json::array();
    for (const SeqLenPhase& p : c.seq_len_phases) {
      phases.push_back(Json{{"from_step", p.from_step}, {"seq_len", p.seq_len}});
    }
    j["seq_len_phases"] = phases;
  }
  return j;
}

void ValidateSchedule(const StreamConfig& c, const std::string& file) {
  TRAIL_CHECK(!c.schedule.empty() && c.schedule[0].from_step == 0, file,
              ": stream.batch_schedule must start with from_step 0");
  for (size_t i = 0; i < c.schedule.size(); ++i) {
    TRAIL_CHECK(c.schedule[i].windows >= 1, file, ": stream.batch_schedule[", i,
                "].windows must be at least 1");
    TRAIL_CHECK(i == 0 || c.schedule[i].from_step > c.schedule[i - 1].from_step, file,
                ": stream.batch_schedule steps must increase");
  }
  TRAIL_CHECK(c.micro_batch_windows >= 1, file, ": stream.micro_batch_windows must be >= 1");
}

// Phases start after step 0 at increasing steps; each names known sources, with finite shares
// >= 0 of which one is positive.
void ValidateMixturePhases(const Manifest& m, const std::string& file) {
  const std::vector<MixturePhase>& phases = m.stream.mixture_phases;
  for (size_t i = 0; i < phases.size(); ++i) {
    const std::string where = "stream.mixture_phases[" + std::to_string(i) + "]";
    TRAIL_CHECK(phases[i].from_step > (i == 0 ? 0 : phases[i - 1].from_step), file, ": ", where,
                ".from_step must be > 0 and greater than the previous phase's (phase 0 is the "
                "sources' target_share from step 0)");
    double total = 0;
    for (const auto& named : phases[i].shares) {
      const std::string& name = named.first;
      const double share = named.second;
      bool known = false;
      for (const SourceSpec& s : m.sources) known = known || s.name == name;
      TRAIL_CHECK(known, file, ": ", where, ".shares names '", name, "', which is not a source");
      TRAIL_CHECK(std::isfinite(share) && share >= 0, file, ": ", where, ".shares.", name,
                  " must be a finite number >= 0");
      total += share;
    }
    TRAIL_CHECK(total > 0, file, ": ", where, ".shares sum to zero");
  }
}

// Length phases start after step 0 at increasing steps, each with a new length in range.
void ValidateSeqLenPhases(const StreamConfig& c, const std::string& file) {
  for (size_t i = 0; i < c.seq_len_phases.size(); ++i) {
    const std::string where = "stream.seq_len_phases[" + std::to_string(i) + "]";
    const SeqLenPhase& p = c.seq_len_phases[i];
    TRAIL_CHECK(p.from_step > (i == 0 ? 0 : c.seq_len_phases[i - 1].from_step), file, ": ", where,
                ".from_step must be > 0 and greater than the previous phase's (phase 0 is "
                "stream.seq_len from step 0)");
    TRAIL_CHECK(p.seq_len >= 1 && p.seq_len <= (1 << 24), file, ": ", where, ".seq_len ", p.seq_len,
                " out of range");
    const int64_t before = i == 0 ? c.seq_len : c.seq_len_phases[i - 1].seq_len;
    TRAIL_CHECK(p.seq_len != before, file, ": ", where, ".seq_len is ", p.seq_len,
                ", the length already in use: a phase must change the length");
  }
}

}  // namespace

ContractHash ParseContractHash(const std::string& hex, const std::string& where) {
  TRAIL_CHECK(hex.size() == 64 && hex.find_first_not_of("0123456789abcdef") == std::string::npos,
              where, ": a tokenizer contract hash is 64 lowercase hex digits, got '", hex, "'");
  ContractHash h{};
  for (size_t i = 0; i < 32; ++i)
    h[i] = static_cast<uint8_t>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  return h;
}

std::string Manifest::ShardPath(const ShardRef& s) const {
  if (std::filesystem::path(s.path).is_absolute() || dir.empty()) return s.path;
  return (std::filesystem::path(dir) / s.path).string();
}

Manifest ParseManifest(const std::string& json_text, const std::string& file,
                       const std::string& dir) {
  Json j;
  try {
    j = Json::parse(json_text);
  } catch (const Json::exception& e) {
    TRAIL_FAIL(file, ": not valid JSON: ", e.what());
  }
  Manifest m;
  m.path = file;
  m.dir = dir;
  Reader top(j, "manifest", file);
  top.AllowOnly({"format", "tokenizer", "sources", "validation", "test", "stream", "lineage"});
  const std::string format = top.Str("format");
  TRAIL_CHECK(format == "trail.data-manifest.v1", file, ": format '", format,
              "' is not trail.data-manifest.v1");

  Reader tok(top.Get("tokenizer"), "tokenizer", file);
  tok.AllowOnly({"contract", "vocab_size", "token_bytes", "eos_id", "bos_id", "pad_id"});
  m.tokenizer.contract = ParseContractHash(tok.Str("contract"), file + ": tokenizer.contract");
  m.tokenizer.vocab_size = static_cast<uint32_t>(tok.U64("vocab_size"));
  m.tokenizer.token_bytes = static_cast<uint32_t>(tok.U64("token_bytes", 2));
  m.tokenizer.eos_id = tok.I64("eos_id", -1);
  m.tokenizer.pad_id = tok.I64("pad_id", -1);
  m.tokenizer.bos_id = tok.I64("bos_id", -1);
  TRAIL_CHECK(m.tokenizer.token_bytes == 2 || m.tokenizer.token_bytes == 4, file,
              ": tokenizer.token_bytes must be 2 or 4");
  TRAIL_CHECK(m.tokenizer.token_bytes == 4 || m.tokenizer.vocab_size <= 65536, file,
              ": tokenizer.vocab_size ", m.tokenizer.vocab_size, " needs token_bytes 4");
  const int64_t vocab = m.tokenizer.vocab_size;
  TRAIL_CHECK(vocab >= 1, file, ": tokenizer.vocab_size must be positive");
  TRAIL_CHECK(
      m.tokenizer.eos_id < vocab && m.tokenizer.pad_id < vocab && m.tokenizer.bos_id < vocab, file,
      ": tokenizer eos_id/bos_id/pad_id must be below vocab_size");

  const Json& srcs = top.Array("sources");
  TRAIL_CHECK(!srcs.empty(), file, ": sources is empty");
  std::set<std::string> names;
  for (size_t i = 0; i < srcs.size(); ++i) {
    const std::string where = "sources[" + std::to_string(i) + "]";
    Reader r(srcs[i], where, file);
    r.AllowOnly({"name", "target_share", "sampling", "max_epochs", "shards"});
    SourceSpec s;
    s.name = r.Str("name");
    TRAIL_CHECK(names.insert(s.name).second, file, ": duplicate source name '", s.name, "'");
    s.target_share = r.Num("target_share");
    TRAIL_CHECK(std::isfinite(s.target_share) && s.target_share >= 0, file, ": ", where,
                ".target_share must be a finite number >= 0");
    s.sampling =
        r.Enum("sampling", Sampling::kPermutation,
               {{"permutation", Sampling::kPermutation}, {"replacement", Sampling::kReplacement}});
    s.max_epochs = static_cast<uint32_t>(r.U64("max_epochs", 0));
    TRAIL_CHECK(s.sampling == Sampling::kPermutation || s.max_epochs == 0, file, ": ", where,
                ".max_epochs applies to permutation sampling only");
    s.shards = ParseShards(r, where);
    TRAIL_CHECK(!s.shards.empty(), file, ": source '", s.name, "' has no shards");
    m.sources.push_back(std::move(s));
  }
  double total = 0;
  for (const SourceSpec& s : m.sources) total += s.target_share;
  TRAIL_CHECK(total > 0, file, ": the sources' target shares sum to zero");

  for (const char* split : {"validation", "test"}) {
    if (!top.Has(split)) continue;
    const Json& arr = top.Array(split);
    for (size_t i = 0; i < arr.size(); ++i) {
      const std::string where = std::string(split) + "[" + std::to_string(i) + "]";
      Reader r(arr[i], where, file);
      r.AllowOnly({"domain", "shards"});
      EvalSet e;
      e.domain = r.Str("domain");
      e.shards = ParseShards(r, where);
      (std::string(split) == "validation" ? m.validation : m.test).push_back(std::move(e));
    }
  }
  if (top.Has("stream")) ParseStream(Reader(top.Get("stream"), "stream", file), m.stream);
  ValidateSchedule(m.stream, file);
  ValidateMixturePhases(m, file);
  ValidateSeqLenPhases(m.stream, file);
  TRAIL_CHECK(!m.stream.append_eos || m.tokenizer.eos_id >= 0, file,
              ": stream.append_eos needs tokenizer.eos_id");
  TRAIL_CHECK(!m.stream.prepend_bos || m.tokenizer.bos_id >= 0, file,
              ": stream.prepend_bos needs tokenizer.bos_id");
  if (top.Has("lineage")) {
    Reader r(top.Get("lineage"), "lineage", file);
    r.AllowOnly({"database", "sha256"});
    m.lineage_db = r.Str("database");
    m.lineage_sha256 = r.Str("sha256", "");
  }
  return m;
}

Manifest LoadManifest(const std::string& path) {
  TRAIL_CHECK(std::filesystem::exists(path), path, ": manifest not found");
  const std::string dir = std::filesystem::path(path).parent_path().string();
  return ParseManifest(ReadFileToString(path), path, dir);
}

std::string ManifestToJson(const Manifest& m) {
  Json j;
  j["format"] = "trail.data-manifest.v1";
  Digest c;
  std::copy(m.tokenizer.contract.begin(), m.tokenizer.contract.end(), c.begin());
  j["tokenizer"] = Json{{"contract", ToHex(c)},
                        {"vocab_size", m.tokenizer.vocab_size},
                        {"token_bytes", m.tokenizer.token_bytes},
                        {"eos_id", m.tokenizer.eos_id},
                        {"pad_id", m.tokenizer.pad_id}};
  if (m.stream.prepend_bos) j["tokenizer"]["bos_id"] = m.tokenizer.bos_id;
  Json srcs = Json::array();
  for (const SourceSpec& s : m.sources) {
    srcs.push_back(
        Json{{"name", s.name},
             {"target_share", s.target_share},
             {"sampling", s.sampling == Sampling::kPermutation ? "permutation" : "replacement"},
             {"max_epochs", s.max_epochs},
             {"shards", ShardsToJson(s.shards)}});
  }
  j["sources"] = srcs;
  for (const auto* split : {&m.validation, &m.test}) {
    Json arr = Json::array();
    for (const EvalSet& e : *split) {
      arr.push_back(Json{{"domain", e.domain}, {"shards", ShardsToJson(e.shards)}});
    }
    j[split == &m.validation ? "validation" : "test"] = arr;
  }
  j["stream"] = StreamToJson(m.stream);
  if (!m.lineage_db.empty()) {
    j["lineage"] = Json{{"database", m.lineage_db}, {"sha256", m.lineage_sha256}};
  }
  return j.dump(2) + "\n";
}

void SaveManifest(const Manifest& m, const std::string& path) {
  WriteFileAtomic(path, ManifestToJson(m));
}

}  // namespace trail::data
