#include "ingest/manifest_builder.h"

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/error.h"
#include "core/file_util.h"
#include "core/hash.h"
#include "data/shard_format.h"
#include "data/stream.h"
#include "tokenizer/contract.h"

namespace trail::ingest {
namespace {
namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

// The shards a `trail data tokenize` run listed, with paths relative to out_dir.
std::vector<data::ShardRef> ReadShardList(const std::string& list, const std::string& contract_hex,
                                          const fs::path& out_dir) {
  Json j;
  try {
    j = Json::parse(ReadFileToString(list));
  } catch (const Json::exception& e) {
    TRAIL_FAIL(list, ": not valid JSON: ", e.what());
  }
  TRAIL_CHECK(j.value("contract", "") == contract_hex, list,
              ": shards were written under another tokenizer contract");
  TRAIL_CHECK(j.value("complete", false), list, ": the tokenize run is not complete");
  const fs::path list_dir = fs::absolute(list).parent_path();
  std::vector<data::ShardRef> refs;
  try {
    for (const Json& s : j.at("shards")) {
      data::ShardRef ref{s.at("path"), s.at("sha256"), s.at("tokens"), s.at("documents")};
      ref.path = fs::relative(list_dir / ref.path, out_dir).string();
      refs.push_back(ref);
    }
  } catch (const Json::exception& e) {
    TRAIL_FAIL(list, ": not a shard list of `trail data tokenize` (", e.what(), ")");
  }
  return refs;
}

data::SourceSpec ParseSource(const std::string& spec, const std::string& contract_hex,
                             const fs::path& out_dir) {
  const size_t a = spec.find('='), b = spec.find('=', a + 1);
  TRAIL_CHECK(a != std::string::npos && b != std::string::npos, "--source '", spec,
              "' is not NAME=SHARE=SHARDS_JSON");
  data::SourceSpec src;
  src.name = spec.substr(0, a);
  try {
    src.target_share = std::stod(spec.substr(a + 1, b - a - 1));
  } catch (...) {
    TRAIL_FAIL("--source '", spec, "': bad share");
  }
  src.shards = ReadShardList(spec.substr(b + 1), contract_hex, out_dir);
  return src;
}

}  // namespace

std::vector<data::BatchPhase> ParseBatchSchedule(const std::string& text, const std::string& flag) {
  std::vector<data::BatchPhase> phases;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    const size_t c = item.find(':');
    try {
      phases.push_back(c == std::string::npos ? data::BatchPhase{0, std::stoll(item)}
                                              : data::BatchPhase{std::stoll(item.substr(0, c)),
                                                                 std::stoll(item.substr(c + 1))});
    } catch (...) {
      TRAIL_FAIL(flag, " '", text, "' is not WINDOWS or FROM_STEP:WINDOWS,...");
    }
  }
  return phases;
}

std::vector<data::SeqLenPhase> ParseSeqLenPhases(const std::string& text, const std::string& flag) {
  std::vector<data::SeqLenPhase> phases;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    const size_t c = item.find(':');
    try {
      TRAIL_CHECK(c != std::string::npos, "");
      phases.push_back({std::stoll(item.substr(0, c)), std::stoll(item.substr(c + 1))});
    } catch (...) {
      TRAIL_FAIL(flag, " '", text, "' is not FROM_STEP:L,FROM_STEP:L,...");
    }
  }
  return phases;
}

data::MixturePhase ParseMixturePhase(const std::string& text, const std::string& flag) {
  const size_t c = text.find(':');
  data::MixturePhase phase;
  try {
    TRAIL_CHECK(c != std::string::npos, "");
    phase.from_step = std::stoll(text.substr(0, c));
    std::stringstream in(text.substr(c + 1));
    std::string item;
    while (std::getline(in, item, ',')) {
      const size_t e = item.find('=');
      TRAIL_CHECK(e != std::string::npos && e > 0, "");
      size_t used = 0;
      const double share = std::stod(item.substr(e + 1), &used);
      TRAIL_CHECK(used == item.size() - e - 1, "");
      phase.shares.push_back({item.substr(0, e), share});
    }
    TRAIL_CHECK(!phase.shares.empty(), "");
  } catch (...) {
    TRAIL_FAIL(flag, " '", text, "' is not FROM_STEP:NAME=SHARE,NAME=SHARE,...");
  }
  return phase;
}

BuiltManifest BuildManifest(const ManifestSpec& spec) {
  const tok::LoadedContract lc = tok::LoadContract(spec.contract);
  const std::string contract_hex = ToHex(lc.hash);
  data::Manifest m;
  std::copy(lc.hash.begin(), lc.hash.end(), m.tokenizer.contract.begin());
  m.tokenizer.vocab_size = lc.contract.vocab_size;
  m.tokenizer.token_bytes = data::TokenBytesForVocab(lc.contract.vocab_size);
  m.tokenizer.eos_id = lc.contract.eos_id;
  m.tokenizer.pad_id = lc.contract.pad_id;
  m.stream.seq_len = spec.seq_len;
  m.stream.seed = spec.seed;
  m.stream.append_eos = lc.contract.eos_id >= 0;
  if (spec.prepend_bos) {
    TRAIL_CHECK(lc.contract.bos_id >= 0, spec.contract,
                ": --prepend-bos needs a contract with a bos_id (this tokenizer names no BOS)");
    m.stream.prepend_bos = true;
    m.tokenizer.bos_id = lc.contract.bos_id;
  }
  const fs::path out_dir = fs::absolute(spec.output).parent_path();
  for (const std::string& s : spec.sources)
    m.sources.push_back(ParseSource(s, contract_hex, out_dir));
  for (auto [specs, sets] :
       {std::pair{&spec.validation, &m.validation}, std::pair{&spec.test, &m.test}}) {
    for (const std::string& s : *specs) {
      const size_t a = s.find('=');
      TRAIL_CHECK(a != std::string::npos, "'", s, "' is not DOMAIN=SHARDS_JSON");
      sets->push_back({s.substr(0, a), ReadShardList(s.substr(a + 1), contract_hex, out_dir)});
    }
  }
  if (!spec.batch_schedule.empty())
    m.stream.schedule = ParseBatchSchedule(spec.batch_schedule, "--batch-schedule");
  if (!spec.seq_len_phases.empty()) {
    m.stream.seq_len_phases = ParseSeqLenPhases(spec.seq_len_phases, "--seq-len-phases");
  }
  for (const std::string& p : spec.mixture_phases) {
    m.stream.mixture_phases.push_back(ParseMixturePhase(p, "--mixture-phase"));
  }
  m.stream.micro_batch_windows = spec.micro_batch;
  m.stream.chunking.max_tokens = spec.chunk_tokens;
  TRAIL_CHECK(spec.positions == "document" || spec.positions == "window",
              "--positions must be document or window");
  m.stream.positions =
      spec.positions == "document" ? data::PositionMode::kDocument : data::PositionMode::kWindow;
  if (!spec.lineage.empty()) {
    TRAIL_CHECK(fs::exists(spec.lineage), spec.lineage, ": no such lineage database");
    m.lineage_db = fs::absolute(spec.lineage).lexically_relative(out_dir).generic_string();
    m.lineage_sha256 = ToHex(Sha256OfFile(spec.lineage));
  }
  const std::string text = data::ManifestToJson(m);
  // Checked the way a run will read it before it is written.
  const data::Manifest check = data::ParseManifest(text, spec.output, out_dir.string());
  const data::CanonicalStream verify(check);
  WriteFileAtomic(spec.output, text);
  return {m.sources.size(), verify.num_windows()};
}

}  // namespace trail::ingest
